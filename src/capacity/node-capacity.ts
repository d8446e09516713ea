// What a node can take per model: the per-request context (n_ctx, already per slot on llama.cpp)
// and the slot count, learned from each kind's own endpoints (PROTOCOLS.md §1.5, §1.10, §2.1, §3.2, §4).
// The figures' vocabulary belongs to the kinds that read them (src/kinds/).

import type { ModelContext, RouterLimits, ServerFacts, ServerRole } from '#src/kinds/index.ts';

export type { ModelContext, RouterLimits, ServerFacts, ServerRole };

export interface NodeCapacity {
  /** llama.cpp answers /props as a router (`role: "router"`) or as a single server. */
  readonly role: ServerRole;
  /** Host-level figures from a single server's plain /props; always undefined for a router. */
  readonly host: ModelContext | undefined;
  /** Figures per model id, only for models that were loaded when polled. A fresh object per poll. */
  readonly models: Readonly<Record<string, ModelContext>>;
  /**
   * Ids loaded now, when the kind says so apart from its model list (Ollama's capacity answer);
   * undefined = the model list's own `status` decides.
   */
  readonly loadedIds: readonly string[] | undefined;
  /** A router's `max_instances` and `models_autoload` from its plain /props; absent elsewhere. */
  readonly router?: RouterLimits;
  /** Its version and (for `auto`) detected kind, asked now and then (capacity-poller.ts); absent = not known. */
  readonly server?: ServerFacts;
}

export const NO_CAPACITY: NodeCapacity = Object.freeze({
  role: 'unknown',
  host: undefined,
  models: Object.freeze({}),
  loadedIds: undefined,
});

/**
 * Keeps the last figure ever seen per model, so a model unloaded since (or a node now asleep) can
 * still be judged by "its last known context" when it would be loaded on demand.
 */
export function rememberContexts(
  known: Readonly<Record<string, ModelContext>>,
  latest: Readonly<Record<string, ModelContext>>,
): Readonly<Record<string, ModelContext>> {
  let changed = false;
  for (const [id, figures] of Object.entries(latest)) {
    const prior = known[id];
    if (prior === undefined || prior.nCtx !== figures.nCtx || prior.slots !== figures.slots) changed = true;
  }
  return changed ? Object.freeze({ ...known, ...latest }) : known;
}
