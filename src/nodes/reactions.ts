// How the node loops answer each other's findings, published on the registry's events: an ejected
// node is probed at once (so it is readmitted as soon as it answers); a node that comes back from
// asleep or dead returns to the normal probe cadence and is listed again at once, so requests held
// for it route without waiting for the next discovery round. While a node wakes its probes run
// faster, at a cadence derived from the health interval. The decisions are the pure functions
// below; nodeReactions only connects them.

import type { EventBus } from '#src/core/events.ts';
import type { HealthState } from './health/health-state.ts';
import type { HealthChecker } from './health/checker.ts';
import type { RegistryEvents } from './registry-events.ts';

/** Pure: whether a health change is a node coming back (asleep or dead → healthy). */
export function isRecovery(from: HealthState, to: HealthState): boolean {
  return to.status === 'healthy' && (from.status === 'asleep' || from.status === 'dead');
}

const WAKE_PROBE_MIN_MS = 100;
const WAKE_PROBE_MAX_MS = 1_000;

/** Pure: the probe cadence while a node wakes — a fifth of the health interval, within 100 ms … 1 s. */
export function wakeProbeIntervalMs(healthIntervalMs: number): number {
  return Math.max(WAKE_PROBE_MIN_MS, Math.min(WAKE_PROBE_MAX_MS, Math.floor(healthIntervalMs / 5)));
}

export interface NodeReactionDeps {
  readonly events: EventBus<RegistryEvents>;
  readonly checker: Pick<HealthChecker, 'probeNow' | 'probeNormally'>;
  /** Lists these nodes' models again now (fire and forget: the caller logs a failure). */
  readonly relist: (nodes: readonly string[]) => void;
}

/** Subscribes the reactions; returns the unsubscribe. */
export function nodeReactions(deps: NodeReactionDeps): () => void {
  const offs = [
    deps.events.on('node:ejected', ({ node }) => deps.checker.probeNow(node)),
    deps.events.on('node:health-changed', ({ node, from, to }) => {
      if (!isRecovery(from, to)) return;
      deps.checker.probeNormally(node);
      deps.relist([node]);
    }),
  ];
  return () => {
    for (const off of offs) off();
  };
}
