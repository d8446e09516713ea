// Pure: for one node and one model — is it loaded, what context does a request get there, how many
// slots, how large is the shared context budget, and whether one more request fits beside those in
// flight (`admits`). Every routing and admin figure comes from here.

import type { NodeSpec } from '#src/config/types.ts';
import type { DiscoveredModel, DiscoveryState } from '#src/discovery/index.ts';
import { serverKind, type KvPool } from '#src/kinds/index.ts';
import type { ModelContext, NodeCapacity } from './node-capacity.ts';

/** The part of a node view these figures need (a NodeView is one). */
export interface CapacityView {
  readonly spec: Pick<NodeSpec, 'kind' | 'kv'>;
  /** The listing indexed by id (NodeView builds it once). */
  readonly modelsById: ReadonlyMap<string, DiscoveredModel>;
  readonly discovery: DiscoveryState;
  readonly capacity: NodeCapacity;
  /** Last figures ever seen per model (survive unloads and outages). */
  readonly knownContexts: Readonly<Record<string, ModelContext>>;
}

export type Residency =
  { readonly state: 'loaded' } | { readonly state: 'on_demand'; readonly status: string } | { readonly state: 'absent' };

// The residencies every node shares, one object each: a node's view facts keep one per listed model
// and each request asks for every node, so none is built per call (at 1,000 nodes × 50 models they
// were 50,000 retained objects, and a request's scans built one per node that does not list it).
const LOADED: Residency = Object.freeze({ state: 'loaded' });
const ABSENT: Residency = Object.freeze({ state: 'absent' });
const UNLOADED: Residency = Object.freeze({ state: 'on_demand', status: 'unloaded' });

function listed(view: CapacityView, model: string): DiscoveredModel | undefined {
  return view.modelsById.get(model);
}

/**
 * Loaded means loaded: a router entry counts only with `status.value == "loaded"` (or no status);
 * Ollama models count only while its capacity answer lists them. A node whose list is unknown (untried)
 * is presumed to have what is asked, like the model filter does.
 */
export function residencyOf(view: CapacityView, model: string): Residency {
  if (view.discovery.phase === 'untried') return LOADED;
  const entry = listed(view, model);
  if (entry === undefined) return ABSENT;
  const loadedIds = view.capacity.loadedIds;
  if (loadedIds !== undefined) return loadedIds.includes(model) ? LOADED : UNLOADED;
  if (entry.loaded) return LOADED;
  return entry.status === undefined || entry.status === 'unloaded' ? UNLOADED : { state: 'on_demand', status: entry.status };
}

/**
 * The per-request context limit for `model` on this node, 0 when unknown. llama.cpp reports n_ctx
 * per slot already, so it is never divided again. Order: this poll's per-model figure → the model
 * list's own figure (vLLM/SGLang max_model_len, llama.cpp meta.n_ctx) → a single server's host figure.
 */
export function ctxFor(view: CapacityView, model: string): number {
  const figures = view.capacity.models[model];
  if (figures !== undefined) return figures.nCtx;
  const fromList = listed(view, model)?.contextTokens;
  if (fromList !== undefined) return fromList;
  if (view.capacity.role === 'single' && view.capacity.host !== undefined && residencyOf(view, model).state === 'loaded') {
    return view.capacity.host.nCtx;
  }
  return 0;
}

/** The context a model would have once loaded: live figures, else the last ever seen; 0 = unknown. */
export function lastKnownCtx(view: CapacityView, model: string): number {
  const live = ctxFor(view, model);
  return live > 0 ? live : (view.knownContexts[model]?.nCtx ?? 0);
}

export function slotsFor(view: CapacityView, model: string): number | undefined {
  const figures = view.capacity.models[model];
  if (figures !== undefined) return figures.slots;
  if (view.capacity.role === 'single' && residencyOf(view, model).state === 'loaded') return view.capacity.host?.slots;
  return undefined;
}

/** The KV pool the gateway budgets on this node, as its kind says (src/kinds/kv-pool.ts); undefined = none. */
function kvPoolOf(view: CapacityView): KvPool | undefined {
  return serverKind(view.spec.kind).kvPool(view.capacity.role);
}

/** Whether the node's requests share a KV pool the gateway budgets (a llama-server's slots). */
export function sharesKvPool(view: CapacityView): boolean {
  return kvPoolOf(view) !== undefined;
}

/** The KV mode a model runs with on this node, and where that came from (shown in /admin/hosts). */
export interface KvModeFigure {
  readonly mode: 'unified' | 'per-slot';
  /** `config`: `[[nodes]] kv`; `router args`: the model's `status.args`; `default`: neither said (llama.cpp's own default). */
  readonly source: 'config' | 'router args' | 'default';
}

export function kvModeFor(view: CapacityView, model: string): KvModeFigure {
  if (view.spec.kv !== 'auto') return { mode: view.spec.kv, source: 'config' };
  const fromArgs = listed(view, model)?.kv;
  return fromArgs === undefined ? { mode: 'unified', source: 'default' } : { mode: fromArgs, source: 'router args' };
}

/**
 * Tokens all in-flight requests of `model` may hold together, or undefined for no budget (the kind
 * manages KV itself; an unknown context cannot be budgeted). The kind's pool says how (kv-pool.ts).
 */
export function budgetFor(view: CapacityView, model: string): number | undefined {
  const pool = kvPoolOf(view);
  const nCtx = ctxFor(view, model);
  if (pool === undefined || nCtx <= 0) return undefined;
  return pool.budget({ nCtx, slots: slotsFor(view, model), mode: kvModeFor(view, model).mode });
}

/** The context each of `slots` concurrent requests is guaranteed (n_ctx / slots on a unified pool). */
export function guaranteedCtx(view: CapacityView, model: string): number {
  const pool = kvPoolOf(view);
  const nCtx = ctxFor(view, model);
  if (nCtx <= 0) return 0;
  return pool === undefined
    ? nCtx
    : pool.guaranteedCtx({ nCtx, slots: slotsFor(view, model), mode: kvModeFor(view, model).mode });
}

export interface Usage {
  readonly requests: number;
  readonly tokens: number;
}

export interface Limits {
  readonly slots: number | undefined;
  readonly budget: number | undefined;
}

export type Refusal = 'no_slot' | 'no_budget';

/** Pure: whether one more request holding `tokens` fits beside `usage` within `limits`. */
export function admits(usage: Usage, limits: Limits, tokens: number): Refusal | undefined {
  if (limits.slots !== undefined && usage.requests >= limits.slots) return 'no_slot';
  // An idle model always admits one request: the context check already made sure it fits alone.
  if (limits.budget !== undefined && usage.requests > 0 && usage.tokens + tokens > limits.budget) return 'no_budget';
  return undefined;
}
