// Pure health hysteresis: consecutive probe failures move a node healthy → degraded → dead;
// one success brings it straight back.

/** `asleep` replaces `dead` for nodes that can be woken (they power down when idle). */
export type HealthStatus = 'unknown' | 'healthy' | 'degraded' | 'dead' | 'asleep';

export interface HealthState {
  readonly status: HealthStatus;
  readonly fails: number;
  readonly lastError: string | undefined;
  readonly lastProbeAt: number | undefined;
  readonly changedAt: number;
}

export type ProbeOutcome = { readonly ok: true; readonly latencyMs: number } | { readonly ok: false; readonly error: string };

export interface HealthThresholds {
  /** Consecutive failures that make a node dead (or asleep). */
  readonly failThreshold: number;
  /** The node has a wake method: at the threshold it is asleep, not dead. */
  readonly canSleep?: boolean;
}

export function initialHealthState(now: number): HealthState {
  return { status: 'unknown', fails: 0, lastError: undefined, lastProbeAt: undefined, changedAt: now };
}

/** Failures at which a node counts as degraded: half the dead threshold, at least one. */
export function degradedAfter(t: HealthThresholds): number {
  return Math.max(1, Math.floor(t.failThreshold / 2));
}

export function observeProbe(prev: HealthState, outcome: ProbeOutcome, t: HealthThresholds, now: number): HealthState {
  if (outcome.ok) {
    const status: HealthStatus = 'healthy';
    return {
      status,
      fails: 0,
      lastError: prev.lastError,
      lastProbeAt: now,
      changedAt: prev.status === status ? prev.changedAt : now,
    };
  }
  const fails = prev.fails + 1;
  let status: HealthStatus = prev.status;
  if (fails >= t.failThreshold) status = t.canSleep === true ? 'asleep' : 'dead';
  else if (fails >= degradedAfter(t)) status = 'degraded';
  return {
    status,
    fails,
    lastError: outcome.error,
    lastProbeAt: now,
    changedAt: prev.status === status ? prev.changedAt : now,
  };
}
