// Events the data plane publishes; metrics and logs subscribe.
import type { TenantPriority } from '#src/core/tenant-class.ts';
import type { RequestFields } from '#src/core/request-fields.ts';
import type { Exclusion } from '#src/routing/index.ts';
import type { AnswerUsage } from '../attempt/answer-usage.ts';
import type { AttemptResult } from '../attempt/attempt-result.ts';
import type { AttemptRecord } from './attempt-record.ts';
import type { LoggedPrompt } from './logged-prompt.ts';

/** One request's particulars for the request log: ids, models, attempts, waits, bytes, the refusal. */
export interface RequestDetail {
  readonly requestId: string;
  /** Wall-clock end of the request, epoch milliseconds (the line's `time`, UTC). */
  readonly endedAt: number;
  /** The model the client named, and the one it resolved to (an alias's target); bounded text, '' before the body was read. */
  readonly requestedModel: string;
  readonly servedModel: string;
  /** Every attempt in order (at most MAX_ATTEMPT_RECORDS). */
  readonly attempts: readonly AttemptRecord[];
  /** Time spent waiting in the model's queue, summed over the attempts. */
  readonly queueWaitMs: number;
  /** The request body's bytes, and the bytes written to the client (head and body). */
  readonly bytesIn: number;
  readonly bytesOut: number;
  /** A refusal by the gateway itself: its error code (model_not_found, rate_limit_exceeded, …). */
  readonly refusal: string | undefined;
  /** A stream's first generated token after the request arrived, and the mean gap between tokens after it. */
  readonly firstTokenMs: number | undefined;
  readonly interTokenMs: number | undefined;
  /** `[log] bodies = true` only: the prompt's text, bounded (logged-prompt.ts). Sensitive. */
  readonly prompt?: LoggedPrompt | undefined;
}

export interface ProxyEvents {
  'proxy:attempt': {
    readonly node: string;
    readonly model: string;
    /** `contradictory_refusal`: a "prompt too long" refusal the gateway's own figures disprove. */
    readonly result: AttemptResult | 'contradictory_refusal';
    readonly status: number | undefined;
    readonly error: string | undefined;
  };
  'proxy:request-finished': {
    readonly endpoint: string;
    /** A bounded label value: a configured or discovered model id, or "_unknown". */
    readonly model: string;
    readonly node: string | undefined;
    readonly status: number;
    readonly durationMs: number;
    readonly firstByteMs: number | undefined;
    /** Set when the upstream failed after the first byte and the response was cut short. */
    readonly brokenError: string | undefined;
    readonly clientAborted: boolean;
    /** The tenant the request was admitted as (absent before it was identified). */
    readonly tenant?: string | undefined;
    /** The tokens the answer used (absent when none reached the client). */
    readonly usage?: AnswerUsage | undefined;
    /**
     * Each feature's own fields of the request, under its name (core/request-fields.ts: a translated
     * request's translation, a forward's sender); absent = none. Plain data: what they mean is each feature's own.
     */
    readonly fields?: RequestFields | undefined;
    /** What the request log (docs/observability.md) says beyond the figures above; plain data, bounded. */
    readonly detail?: RequestDetail | undefined;
  };
  /** A tenant's limit answered 429 (`reason`: concurrency, requests, tokens or budget). */
  'proxy:tenant-limited': { readonly tenant: string; readonly reason: 'concurrency' | 'requests' | 'tokens' | 'budget' };
  'route:excluded': { readonly model: string; readonly excluded: readonly Exclusion[] };
  /** A request answered 400 context_length_exceeded by the gateway itself. */
  'proxy:context-rejected': { readonly model: string };
  /** A first attempt nothing could take: 404 (no node lists the model) or 503 (its nodes are unavailable). */
  'proxy:unroutable': { readonly answer: 'model_not_found' | 'no_healthy_node' };
  /** A request was sent that makes a full llama-server router evict a model to load another. */
  'route:model-switch': { readonly node: string; readonly model: string };
  /** A request left its model's queue (admitted or refused) after waiting. */
  'proxy:queue-wait': {
    readonly model: string;
    readonly waitedMs: number;
    readonly admitted: boolean;
    /** The tenant it queued as (absent without tenants). Unbounded text: for logs and tests, never a metrics label. */
    readonly tenant?: string | undefined;
  };
  /** A request forwarded to another site, and how that attempt ended (success, connect_error, http_5xx, …). */
  'mesh:forwarded': { readonly site: string; readonly result: string };
  /**
   * A forwarded request arriving from another site: `accepted` (its signature used: admitted and
   * served), or the rejection (unsigned, unknown_site, own_site, bad_signature, expired, replayed,
   * replay_memory_full, replay_unavailable, digest_mismatch, malformed_tenant).
   * `site` is the pinned site, or `_unknown`.
   */
  'mesh:forwarded-in': {
    readonly site: string;
    readonly result: string;
    /** `accepted` only: how it is admitted — the site's tenant (or `default`), the class it queues in, the class it stated. */
    readonly admitted?:
      | { readonly tenant: string; readonly priority: TenantPriority; readonly claimedClass: TenantPriority | undefined }
      | undefined;
  };
  /** A remote site stopped answering forwards (backing off), or answered again: transitions only. */
  'mesh:site-reachability': { readonly site: string; readonly reachable: boolean; readonly detail: string | undefined };
}
