// Pure decisions about which models are running on a node that loads them at runtime (llama.cpp's
// router, Ollama): name resolution, and which model the LRU rule evicts before a load.

import type { ModelStatus } from '#src/sim/spec.ts';

export interface ResidentModel {
  readonly id: string;
  readonly aliases: readonly string[];
  readonly status: ModelStatus;
  /** A stamp that grows with every use: set at spawn and on every proxied POST (not on GETs). */
  readonly lastUsedOrder: number;
}

export function isRunning(status: ModelStatus): boolean {
  return status === 'loaded' || status === 'loading' || status === 'sleeping';
}

/** The canonical id for a name or alias, or undefined when the node does not know it. */
export function resolveModelName(models: readonly ResidentModel[], name: string): string | undefined {
  return (models.find((m) => m.id === name) ?? models.find((m) => m.aliases.includes(name)))?.id;
}

/**
 * The running model to unload before another one loads: the least recently used, when the running
 * count has reached `modelsMax` (0 = unlimited). Ties go to the model listed first.
 */
export function pickEvictionVictim(models: readonly ResidentModel[], modelsMax: number): string | undefined {
  if (modelsMax <= 0) return undefined;
  const running = models.filter((m) => isRunning(m.status));
  if (running.length < modelsMax) return undefined;
  let victim: ResidentModel | undefined;
  for (const model of running) {
    if (victim === undefined || model.lastUsedOrder < victim.lastUsedOrder) victim = model;
  }
  return victim?.id;
}

/**
 * `server_lru_sched::pick_victim`: the least recently used model other than `exclude` that is ready
 * (loaded or sleeping) with no request in flight; undefined when none may be given up. A model still
 * loading or mid-request is never one. Asked only when the router is full.
 */
export function pickVictim(
  models: readonly ResidentModel[],
  exclude: string,
  requestsInFlight: (id: string) => number,
): string | undefined {
  let victim: ResidentModel | undefined;
  for (const model of models) {
    if (model.id === exclude || (model.status !== 'loaded' && model.status !== 'sleeping') || requestsInFlight(model.id) > 0)
      continue;
    if (victim === undefined || model.lastUsedOrder < victim.lastUsedOrder) victim = model;
  }
  return victim?.id;
}

/** Whether another model may start without evicting one (0 = unlimited). */
export function hasRoom(models: readonly ResidentModel[], modelsMax: number): boolean {
  return modelsMax <= 0 || models.filter((m) => isRunning(m.status)).length < modelsMax;
}
