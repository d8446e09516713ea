// How one upstream attempt ended, as the request handler sees it. A refusal the node explained
// (overflow, unknown model) has its own kind, with the meaning in its own field: it is neither a
// transport failure nor an answer, and the handler decides what it changes.

import type { AnswerUsage, DecodeObserved } from './answer-usage.ts';
import type { AttemptFailure } from './attempt-result.ts';
import type { UpstreamErrorMeaning } from './upstream-error.ts';
import type { TokenTimes } from './stream-timing.ts';

export type AttemptOutcome =
  /**
   * The answer (any status) reached the client completely; `usage`: what a 2xx stated it used (or
   * was seen to); `decode`: what a 200 showed of the node's speed (learned: capacity/learned-figures.ts).
   */
  | {
      readonly kind: 'delivered';
      readonly status: number;
      readonly firstByteMs: number | undefined;
      readonly usage?: AnswerUsage | undefined;
      readonly tokens?: TokenTimes | undefined;
      readonly decode?: DecodeObserved | undefined;
    }
  /** Nothing reached the client; another node may be tried. */
  | { readonly kind: 'failed'; readonly result: AttemptFailure; readonly error: string; readonly status?: number }
  /** The node refused with an error the gateway recognised; nothing reached the client. */
  | { readonly kind: 'refused'; readonly refusal: UpstreamErrorMeaning; readonly error: string; readonly status: number }
  /** Headers went out, then the upstream failed; the client response was ended. */
  | {
      readonly kind: 'broken';
      readonly status: number;
      readonly error: string;
      readonly firstByteMs: number | undefined;
      readonly usage?: AnswerUsage | undefined;
      readonly tokens?: TokenTimes | undefined;
    }
  /** The client went away; the upstream request was aborted. `usage`: what a stream cut short had used. */
  | { readonly kind: 'client_gone'; readonly status: number | undefined; readonly usage?: AnswerUsage | undefined };

/** Where an attempt (or a phase of it) tells its end, once: how it ended, or what threw. */
export interface OutcomeListener {
  ended(outcome: AttemptOutcome): void;
  /**
   * Something threw between sending and answering (a header node:http refuses, a bug): the node's
   * work is cut first, so that it does not go on generating for nobody.
   */
  threw(error: unknown): void;
}
