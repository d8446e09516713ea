// Pure passive health: the outcomes of real requests. N connection failures or 5xx answers in a row
// eject a node for a back-off period (it counts as degraded and is re-probed at once); one success
// resets the count. Outcomes that say nothing about the node (client aborts, refusals) are neutral.

export interface PassiveState {
  readonly consecutiveFailures: number;
  /** Epoch ms until which the node is skipped; undefined = not ejected. */
  readonly ejectedUntil: number | undefined;
}

export const INITIAL_PASSIVE_STATE: PassiveState = Object.freeze({ consecutiveFailures: 0, ejectedUntil: undefined });

export type UpstreamVerdict = 'success' | 'failure' | 'neutral';

export interface EjectionPolicy {
  readonly ejectAfterFailures: number;
  readonly ejectForMs: number;
}

export function observeUpstream(prev: PassiveState, verdict: UpstreamVerdict, policy: EjectionPolicy, now: number): PassiveState {
  if (verdict === 'neutral') return prev;
  if (verdict === 'success') {
    return prev.consecutiveFailures === 0 ? prev : { consecutiveFailures: 0, ejectedUntil: prev.ejectedUntil };
  }
  const consecutiveFailures = prev.consecutiveFailures + 1;
  if (consecutiveFailures >= policy.ejectAfterFailures) {
    // Ejection restarts the count, so a node back from back-off gets a full new run of chances.
    return { consecutiveFailures: 0, ejectedUntil: now + policy.ejectForMs };
  }
  return { consecutiveFailures, ejectedUntil: prev.ejectedUntil };
}

/** Takes passive state or a node view: both carry the same absolute deadline. */
export function isEjected(state: Pick<PassiveState, 'ejectedUntil'>, now: number): boolean {
  return state.ejectedUntil !== undefined && state.ejectedUntil > now;
}
