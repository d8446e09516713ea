// What request workers (`[server] workers` > 1) add to the owner's parts: the figures they report
// (summed with the owner's own for /admin/runtime and /metrics), and a reload they must follow.

import type { PoolFigures } from '#src/proxy/index.ts';
import { sumPoolFigures, type WorkerFigures } from '#src/workers/index.ts';

export interface WorkerHooks {
  readonly figures: () => readonly WorkerFigures[];
  readonly reloaded: () => void;
}

export const NO_WORKERS: WorkerHooks = Object.freeze({ figures: () => [], reloaded: () => {} });

export function upstreamWithWorkers(own: Readonly<Record<string, PoolFigures>>, hooks: WorkerHooks): Record<string, PoolFigures> {
  return sumPoolFigures([own, ...hooks.figures().map((f) => f.upstream)]);
}

export function sitesWithWorkers(own: Readonly<Record<string, PoolFigures>>, hooks: WorkerHooks): Record<string, PoolFigures> {
  return sumPoolFigures([own, ...hooks.figures().map((f) => f.upstreamSites)]);
}

export function heldWithWorkers(own: number, hooks: WorkerHooks): number {
  return hooks.figures().reduce((sum, f) => sum + f.heldBytes, own);
}
