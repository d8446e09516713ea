// A target is anything one attempt of a request can go to: a local node (admitted through the
// scheduler) or a remote site (chosen by routing/remote's chooseSite). The failover loop
// (failover-loop.ts) treats both alike — after Caddy's one proxy loop over upstreams whose
// transport differs: only how a target is reached and how its outcome feeds back differ.

import type { Dispatcher } from 'undici';
import type { AnswerUsage, KnownRate } from '../attempt/answer-usage.ts';
import type { AttemptOutcome } from '../attempt/attempt-outcome.ts';
import type { UpstreamErrorMeaning } from '../attempt/upstream-error.ts';
import type { UsageAsked } from '../attempt/usage-strip.ts';
import type { FirstTokenDeadline } from '../attempt/first-token-deadline.ts';
import type { ErrorDialect } from '../http/error-dialect.ts';
import type { RouteSummary } from '#src/routing/index.ts';

/** Which target an attempt went to. */
export type TargetId = { readonly kind: 'node'; readonly name: string } | { readonly kind: 'site'; readonly id: string };

/** How one attempt is sent: everything that differs between a node and a site. */
export interface TargetCall {
  readonly pool: Dispatcher;
  /** The pool's origin, when known (a node's: upstream-pools.ts, `dispatchTo`): named in the call's dispatch options. */
  readonly origin?: string | undefined;
  /** The request-target on the pool's origin (the node's or site's path prefix included). */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly extraResponseHeaders: Readonly<Record<string, string>>;
  /** False for a site: none of its error answers reaches the client (response-policy.ts). */
  readonly passOnErrors: boolean;
  /** routing.load_timeout when the attempt loads its model: the bound on waiting for the head. */
  readonly headersTimeoutMs: number | undefined;
  /** The body this target is sent, when it is not the request's own (it asks for the stream's usage: request/usage-ask.ts). */
  readonly body?: Buffer | undefined;
  /** Set with `body`: what asking adds to this target's stream, taken out again. */
  readonly usageAsked?: UsageAsked | undefined;
  /** Told a streamed answer's id as its first event passes (a node's: the one memory of owners learns it); absent = not read. */
  readonly learnAnswerId?: ((id: string) => void) | undefined;
  /** The endpoint's error dialect: a node's error body passed on is worded in it (absent = as the node sent it). */
  readonly errorDialect?: ErrorDialect;
  /** The endpoint answers other media than JSON and SSE (the audio routes): passed through. */
  readonly anyMedia?: boolean | undefined;
  /**
   * A node's learned speed for the model, and the answers the request asks it for (`n`, `best_of`):
   * what a client leaving before the answer is charged for its generation (attempt/answer-usage.ts).
   * Absent (a site) = its prompt alone.
   */
  readonly speed?: { readonly rate: KnownRate | undefined; readonly choices: number } | undefined;
  /** A node's first-token deadline for a streamed request (attempt/first-token-deadline.ts); absent = none (a site). */
  readonly firstToken?: FirstTokenDeadline | undefined;
}

/** What `prepare` gives: a call to send, or an outcome already known without sending (an unusable url). */
export type Prepared =
  { readonly kind: 'send'; readonly call: TargetCall } | { readonly kind: 'unsendable'; readonly outcome: AttemptOutcome };

export interface Target {
  readonly id: TargetId;
  /** The node's name or `site:<id>`: what attempts, failures and the request's report carry. */
  readonly label: string;
  /** The node's or site's URL (an attempt span's server.address; parsed only when tracing). */
  readonly url?: string | undefined;
  /** A node: the routing decision that admitted it (policy, reason, every candidate's score), for the request's record. */
  readonly route?: RouteSummary | undefined;
  /** Builds the call (a site's is signed here, once per attempt; a node's at once, without a promise). Called once, before sending. */
  prepare(): Prepared | Promise<Prepared>;
  /** Asked when the answer is a 5xx (or a site's error): true hides it and fails over. */
  canFailOver(): boolean;
  /** Called exactly once when the attempt is over, even when it threw: a node returns its lease. */
  release(): void;
  /**
   * The attempt's outcome fed back (a node: load ticket, passive health through `proxy:attempt`,
   * learned context; a site: reachability back-off and `mesh:forwarded`), and what it means for
   * the loop. Called once per attempt, after `release`.
   */
  conclude(outcome: AttemptOutcome): AttemptVerdict;
}

/** Why a target tried did not serve the request, in this site's words. */
export interface TargetFailure {
  readonly target: TargetId;
  /**
   * `failed`: a node's attempt failed; `refused`: it answered with a refusal; `unreachable`: a
   * site did not answer usably; `not_tried`: chosen, but could not be sent (no site key yet).
   */
  readonly code: 'failed' | 'refused' | 'unreachable' | 'not_tried';
  readonly detail: string;
  /** A node's route-level 404 (`refused`): it has no such endpoint (attempt-feedback.ts, `endpointLackers`). */
  readonly lacksEndpoint?: true | undefined;
}

/** What the client's answer reports when a target answered (the request report's figures). */
export interface AnswerFigures {
  readonly firstByteMs?: number | undefined;
  /** The tokens the answer used (a stream cut short: those seen). */
  readonly usage?: AnswerUsage | undefined;
  readonly brokenError?: string | undefined;
  readonly clientAborted?: boolean;
  /** A stream's token timing (attempt/stream-timing.ts). */
  readonly firstTokenMs?: number | undefined;
  readonly interTokenMs?: number | undefined;
}

/** What one attempt's outcome means for the loop (attempt-feedback.ts decides it, per kind of target). */
export type AttemptVerdict =
  /** Something reached the client (or the client left): the request is over. */
  | { readonly next: 'answered'; readonly status: number; readonly figures: AnswerFigures }
  | {
      /** Nothing reached the client: try the next target. */
      readonly next: 'fail_over';
      readonly failure: TargetFailure;
      /** A refusal the answer repeats if nothing else serves (overflow, unknown model); undefined = keeps the last one. */
      readonly refusal?: UpstreamErrorMeaning | undefined;
      /** Whether this was a load that timed out (routing.load_timeout); undefined = says nothing (a site). */
      readonly loadTimedOut?: boolean | undefined;
      /** The prompt's bounds learned from a node's overflow refusal, for the remaining attempts. */
      readonly bounds?: { readonly promptTokens: number | undefined; readonly minPromptTokens: number | undefined } | undefined;
    };

/** The label a forwarded request's attempt and report carry in place of a node name. */
export const siteLabel = (site: string): string => `site:${site}`;

export function targetLabel(id: TargetId): string {
  return id.kind === 'node' ? id.name : siteLabel(id.id);
}

/** One line of the "every target tried failed" list: `<label>: <detail>`. */
export function failureLine(failure: TargetFailure): string {
  return `${targetLabel(failure.target)}: ${failure.detail}`;
}
