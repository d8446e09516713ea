// A request waiting in the scheduler: what it waits for (a slot in its model's queue, or a node that
// wakes), how long, which verdicts are worth waiting out, and why routing last said no.

import type { Exclusion, RouteRequest, UnroutableKind } from '#src/routing/index.ts';
import type { Admission, QueueSettings } from './admission.ts';

export interface Wait {
  readonly timeoutMs: number;
  readonly swapAfterMs: number;
  readonly timeoutReason: 'queue_timeout' | 'wake_timeout';
  /** Whether an unroutable verdict is worth waiting out (busy nodes; a node still waking). */
  readonly keepWaiting: (kind: UnroutableKind) => boolean;
  readonly initial: readonly Exclusion[];
}

export interface Waiter {
  readonly req: RouteRequest;
  readonly settings: QueueSettings;
  readonly signal: AbortSignal;
  readonly loadTimeoutMs: number;
  readonly wait: Wait;
  readonly enteredAtMs: number;
  /** Why routing last said no (reported if the wait ends in a refusal). */
  excluded: readonly Exclusion[];
  readonly settle: (admission: Admission) => void;
}

const busyOnly = (kind: UnroutableKind): boolean => kind === 'busy';
const worthAWake = (kind: UnroutableKind): boolean => kind !== 'too_large' && kind !== 'blocked';

/** Waiting in the model's queue: only busy nodes are worth waiting out, until the queue's timeout. */
export function waitInQueue(timeoutMs: number, settings: QueueSettings, initial: readonly Exclusion[]): Wait {
  return { timeoutMs, swapAfterMs: settings.swapAfterMs, timeoutReason: 'queue_timeout', keepWaiting: busyOnly, initial };
}

/** Held for a node that wakes: anything but a prompt too large for every node, or a model blocked by pins, is worth waiting out. */
export function waitForWake(timeoutMs: number, settings: QueueSettings, initial: readonly Exclusion[]): Wait {
  return { timeoutMs, swapAfterMs: settings.swapAfterMs, timeoutReason: 'wake_timeout', keepWaiting: worthAWake, initial };
}
