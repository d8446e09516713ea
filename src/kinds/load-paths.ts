// Pure: which GETs read a node's load now, by what its capacity answer said it is. A llama-server
// router answers a plain `/metrics` with 400 and is asked per model it has loaded (asking about any
// other would load it); a llama.cpp node whose role is not known yet is asked nothing until its first
// capacity poll tells router from single server.

import { loadMetricsPath } from './load-metrics.ts';
import type { ServerRole } from './server-kind.ts';

/** The GETs for a node in `role` with `loadedModels` loaded; undefined = nothing to ask (yet). */
export type LoadPaths = (role: ServerRole, loadedModels: readonly string[]) => readonly string[] | undefined;

/** A kind that exports no load gauges. */
export const NO_LOAD_PATHS: LoadPaths = () => undefined;

/** One `/metrics` for the node, or one per loaded model on a router (an `auto` node may be one). */
export const METRICS_PATHS: LoadPaths = (role, loadedModels) =>
  role === 'router' ? loadedModels.map((id) => loadMetricsPath(id)) : [loadMetricsPath()];

/** llama.cpp: as above once the role is known; before, nothing (a router would answer 400). */
export const LLAMACPP_LOAD_PATHS: LoadPaths = (role, loadedModels) =>
  role === 'unknown' ? undefined : METRICS_PATHS(role, loadedModels);
