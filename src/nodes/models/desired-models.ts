// Pure: the config's desired state of each model ([[models.available]] warm, preload, pin), and the
// models it protects: those a request never switches out (pin) and those the reconciler keeps
// loaded, switched out last (warm, preload).

import type { DesiredModelState, GatewayConfig } from '#src/config/index.ts';

/** What the scheduler's router-room filter protects (scheduler/switch-claims.ts, ProtectedModels). */
export interface ProtectedModelNames {
  readonly pinned: ReadonlySet<string>;
  readonly wanted: ReadonlySet<string>;
}

export function desiredOf(config: GatewayConfig): Map<string, DesiredModelState> {
  const desired = new Map<string, DesiredModelState>();
  for (const model of config.models.available) if (model.desired !== undefined) desired.set(model.name, model.desired);
  return desired;
}

export function protectedModelsOf(config: GatewayConfig): ProtectedModelNames {
  const pinned = new Set<string>();
  const wanted = new Set<string>();
  for (const [model, desired] of desiredOf(config)) {
    if (desired.pin) pinned.add(model);
    if (desired.warm > 0 || desired.preload) wanted.add(model);
  }
  return { pinned, wanted };
}
