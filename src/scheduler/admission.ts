// What the scheduler answers an admission with, and the waiting limits it reads from a request's
// settings snapshot: plain data (it crosses to worker threads as it is).

import type { NodeView } from '#src/nodes/index.ts';
import type { Exclusion, RouteSummary, UnroutableKind } from '#src/routing/index.ts';
import type { LoadOutcome } from './router-switches.ts';

export type RefusalReason = UnroutableKind | 'queue_full' | 'queue_timeout' | 'wake_timeout' | 'aborted';

/** An admitted request that makes its node load the model: its answer settles the load. */
export interface LoadTicket {
  /** How long the request may wait for response headers (routing.load_timeout). */
  readonly timeoutMs: number;
  /** Report once: the answer's head came (`loaded`), the attempt failed, or the load timed out. */
  settle(outcome: LoadOutcome): void;
}

export type Admission =
  | {
      readonly kind: 'admitted';
      readonly node: NodeView;
      /** The selection policy that picked the node, and why (the `x-switchyard-route` header), with every candidate's score. */
      readonly route: RouteSummary;
      readonly waitedMs: number;
      /** Set when the request makes the node load its model (load_timeout applies). */
      readonly load: LoadTicket | undefined;
      release(): void;
    }
  | {
      readonly kind: 'refused';
      readonly reason: RefusalReason;
      readonly excluded: readonly Exclusion[];
      readonly waitedMs: number;
    };

/** The waiting limits, read from the request's settings snapshot. */
export interface QueueSettings {
  readonly queueTimeoutMs: number;
  readonly maxQueue: number;
  /** How long refresh-on-miss waits for fresh listings (0: re-list, but do not wait). */
  readonly missWaitMs: number;
  /** routing.swap_after: a switch waiting this long holds new requests for the router's loaded models. */
  readonly swapAfterMs: number;
  /** routing.load_timeout: how long a request that loads a model may wait for its answer's head. */
  readonly loadTimeoutMs: number;
  /** routing.queue_aging: a tenant's oldest request waiting this long unserved is raised one class (0 = never); absent = the default. */
  readonly queueAgingMs?: number;
}
