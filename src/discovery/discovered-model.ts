// One model as a node lists it on `GET /v1/models`, normalised across server kinds.

import type { ModelProgress } from '#src/kinds/index.ts';

export interface DiscoveredModel {
  /** The exact id the node accepts in a request's `model` field. */
  readonly id: string;
  /**
   * False only for a llama.cpp router entry whose `status.value` is not "loaded"; every other
   * server lists only what it can answer at once, so its entries are loaded.
   */
  readonly loaded: boolean;
  /** llama.cpp router `status.value` (e.g. "unloaded", "loading", "sleeping"); undefined elsewhere. */
  readonly status: string | undefined;
  /** vLLM/SGLang `max_model_len` or llama.cpp `meta.n_ctx` (per slot); undefined when not reported. */
  readonly contextTokens: number | undefined;
  /** Other names the node resolves to this id (llama.cpp `aliases`), without the id itself. */
  readonly aliases: readonly string[];
  /** llama.cpp router: the KV mode the model's command line (`status.args`) runs with; absent = not said. */
  readonly kv?: 'unified' | 'per-slot';
  /** llama.cpp router, status `failed`: the exit code its child died with. */
  readonly exitCode?: number;
  /** How far a load or download has come (from the router's pushed frames only; kept through polls of the same status). */
  readonly progress?: ModelProgress;
}
