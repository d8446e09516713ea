// What a simulated node is: the easy-to-write input spec (only `kind` and `models` required) and the
// fully-defaulted form the servers run on. Every default lives in SIM_DEFAULTS.

/** `openai`: a generic OpenAI-compatible server (chat, completions, embeddings; no Responses, no Messages). */
export const SIM_KINDS = ['vllm', 'llamacpp', 'llamacpp-router', 'ollama', 'sglang', 'openai'] as const;
export type SimKind = (typeof SIM_KINDS)[number];

export const KV_MODES = ['unified', 'per-slot'] as const;
/** llama.cpp only: `unified` = all slots of a model share one pool of n_ctx tokens. */
export type KvMode = (typeof KV_MODES)[number];

/**
 * What a text answer is: `fill` writes the filler words up to the request's limit (16 tokens without
 * one: long streams for benches and tests), `natural` a short answer derived from the prompt that
 * ends by itself ("stop"), cut at a smaller limit ("length"). Tool calls end by themselves in both.
 */
export const ANSWER_MODES = ['fill', 'natural'] as const;
export type AnswerMode = (typeof ANSWER_MODES)[number];

export const MODEL_STATUSES = ['loaded', 'unloaded', 'loading', 'sleeping'] as const;
export type ModelStatus = (typeof MODEL_STATUSES)[number];

export interface SimModelSpec {
  readonly id: string;
  readonly aliases?: readonly string[];
  /** Per-slot n_ctx (vLLM/SGLang: max_model_len; Ollama: num_ctx). */
  readonly contextTokens?: number;
  readonly slots?: number;
  /** Initial status (llamacpp-router: every status; ollama: loaded or unloaded). */
  readonly status?: ModelStatus;
  readonly sizeBytes?: number;
  /** Every load fails (the router's child exits 1; Ollama's runner dies). */
  readonly failsToLoad?: boolean;
}

export interface SimNodeSpec {
  readonly kind: SimKind;
  /** Model ids, or model tables; at least one. */
  readonly models: readonly (string | SimModelSpec)[];
  readonly name?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  readonly contextTokens?: number;
  readonly slots?: number;
  readonly kv?: KvMode;
  readonly ttftMs?: number;
  readonly tokensPerSecond?: number;
  /** Router child load time / Ollama cold-load time. */
  readonly loadTimeMs?: number;
  /** llamacpp-router: its `req_count` of a model drops this long after a proxied answer ended (the gap where the gateway's count is lower). */
  readonly requestEndLagMs?: number;
  /** llamacpp-router: how long an unloaded child takes to exit (its status stays `loaded` until then; 0 = at once). */
  readonly unloadTimeMs?: number;
  /** Running models before LRU eviction; 0 = unlimited (llamacpp-router, ollama). */
  readonly modelsMax?: number;
  /** llamacpp-router only. */
  readonly autoload?: boolean;
  readonly apiKey?: string;
  /** Serve /metrics (llama.cpp without it answers 501; SGLang 404). */
  readonly metrics?: boolean;
  /** The version it states (vLLM `/version`, Ollama `/api/version`, llama-server `build_info`); absent = the kind's current one. */
  readonly version?: string;
  readonly answers?: AnswerMode;
  /**
   * llama.cpp kinds: simulate the prompt cache — the first token of a prompt that shares a prefix
   * with the last one on its slot comes sooner, down to this when the whole prompt was cached.
   * Absent = no prompt cache (every prompt takes `ttftMs`).
   */
  readonly prefixCacheTtftMs?: number;
}

export interface FleetSpec {
  readonly nodes: readonly SimNodeSpec[];
}

export interface ResolvedModel {
  readonly id: string;
  readonly aliases: readonly string[];
  readonly contextTokens: number;
  readonly slots: number;
  readonly status: ModelStatus;
  readonly sizeBytes: number;
  readonly failsToLoad: boolean;
}

export interface ResolvedNode {
  readonly name: string;
  readonly kind: SimKind;
  readonly port: number;
  readonly kv: KvMode;
  readonly ttftMs: number;
  readonly tokensPerSecond: number;
  readonly loadTimeMs: number;
  readonly requestEndLagMs: number;
  readonly unloadTimeMs: number;
  readonly modelsMax: number;
  readonly autoload: boolean;
  readonly apiKey: string | undefined;
  readonly metrics: boolean;
  readonly version: string | undefined;
  readonly answers: AnswerMode;
  readonly prefixCacheTtftMs: number | undefined;
  readonly models: readonly ResolvedModel[];
}

const DEFAULT_KV: KvMode = 'unified';
const DEFAULT_ANSWERS: AnswerMode = 'fill';

export const SIM_DEFAULTS = Object.freeze({
  port: 0,
  contextTokens: 8192,
  slots: 4,
  kv: DEFAULT_KV,
  ttftMs: 20,
  tokensPerSecond: 200,
  loadTimeMs: 50,
  routerModelsMax: 4,
  ollamaModelsMax: 3,
  autoload: true,
  metrics: true,
  sizeBytes: 4_912_898_304,
  answers: DEFAULT_ANSWERS,
});

/** Kinds whose models load and unload at runtime. */
export function hasModelResidency(kind: SimKind): boolean {
  return kind === 'llamacpp-router' || kind === 'ollama';
}

/** Ollama names carry a tag; a bare name means `:latest`. */
export function canonicalModelId(kind: SimKind, id: string): string {
  return kind === 'ollama' && !id.includes(':') ? `${id}:latest` : id;
}

export function resolveNodeSpec(spec: SimNodeSpec, index = 0): ResolvedNode {
  const nodeContext = spec.contextTokens ?? SIM_DEFAULTS.contextTokens;
  const nodeSlots = spec.slots ?? SIM_DEFAULTS.slots;
  const defaultStatus: ModelStatus = hasModelResidency(spec.kind) ? 'unloaded' : 'loaded';
  const models = spec.models.map((entry): ResolvedModel => {
    const model = typeof entry === 'string' ? { id: entry } : entry;
    return {
      id: canonicalModelId(spec.kind, model.id),
      aliases: [...(model.aliases ?? [])],
      contextTokens: model.contextTokens ?? nodeContext,
      slots: model.slots ?? nodeSlots,
      status: model.status ?? defaultStatus,
      sizeBytes: model.sizeBytes ?? SIM_DEFAULTS.sizeBytes,
      failsToLoad: model.failsToLoad ?? false,
    };
  });
  return {
    name: spec.name ?? `${spec.kind}-${index}`,
    kind: spec.kind,
    port: spec.port ?? SIM_DEFAULTS.port,
    kv: spec.kv ?? SIM_DEFAULTS.kv,
    ttftMs: spec.ttftMs ?? SIM_DEFAULTS.ttftMs,
    tokensPerSecond: spec.tokensPerSecond ?? SIM_DEFAULTS.tokensPerSecond,
    loadTimeMs: spec.loadTimeMs ?? SIM_DEFAULTS.loadTimeMs,
    requestEndLagMs: spec.requestEndLagMs ?? 0,
    unloadTimeMs: spec.unloadTimeMs ?? 0,
    modelsMax: spec.modelsMax ?? (spec.kind === 'ollama' ? SIM_DEFAULTS.ollamaModelsMax : SIM_DEFAULTS.routerModelsMax),
    autoload: spec.autoload ?? SIM_DEFAULTS.autoload,
    apiKey: spec.apiKey,
    metrics: spec.metrics ?? SIM_DEFAULTS.metrics,
    version: spec.version,
    answers: spec.answers ?? SIM_DEFAULTS.answers,
    prefixCacheTtftMs: spec.prefixCacheTtftMs,
    models,
  };
}

export interface SpecProblem {
  /** Key path relative to the node, e.g. `models` or `model[1].status`. */
  readonly path: string;
  readonly message: string;
}

const RUNNING: readonly ModelStatus[] = ['loaded', 'loading', 'sleeping'];

/** Rules a node must satisfy beyond field types; empty when it can start. */
export function nodeSpecProblems(node: ResolvedNode, modelsKey = 'models'): SpecProblem[] {
  const problems: SpecProblem[] = [];
  if (node.models.length === 0) {
    problems.push({ path: modelsKey, message: 'a node needs at least one model' });
  }
  if ((node.kind === 'llamacpp' || node.kind === 'sglang') && node.models.length > 1) {
    problems.push({ path: modelsKey, message: `a ${node.kind} node serves exactly one model` });
  }
  if (!Number.isInteger(node.port) || node.port < 0 || node.port > 65_535) {
    problems.push({ path: 'port', message: 'must be an integer in 0..65535' });
  }
  if (node.prefixCacheTtftMs !== undefined) {
    if (node.kind !== 'llamacpp' && node.kind !== 'llamacpp-router') {
      problems.push({ path: 'prefix_cache_ttft', message: 'only the llama.cpp kinds simulate the prompt cache' });
    } else if (!(node.prefixCacheTtftMs >= 0 && node.prefixCacheTtftMs <= node.ttftMs)) {
      problems.push({ path: 'prefix_cache_ttft', message: `must be between 0 and ttft (${node.ttftMs}ms)` });
    }
  }
  if (!(node.tokensPerSecond > 0)) {
    problems.push({ path: 'tokens_per_second', message: 'must be greater than 0' });
  }
  const seen = new Set<string>();
  node.models.forEach((model, i) => {
    const at = `${modelsKey}[${i}]`;
    for (const name of [model.id, ...model.aliases]) {
      if (seen.has(name)) problems.push({ path: at, message: `model name '${name}' is used twice` });
      seen.add(name);
    }
    if (!Number.isInteger(model.contextTokens) || model.contextTokens < 1) {
      problems.push({ path: `${at}.context`, message: 'must be a positive integer' });
    }
    if (!Number.isInteger(model.slots) || model.slots < 1) {
      problems.push({ path: `${at}.slots`, message: 'must be a positive integer' });
    }
    if (model.status !== 'loaded' && !hasModelResidency(node.kind)) {
      problems.push({ path: `${at}.status`, message: `a ${node.kind} model is always loaded` });
    }
    if (node.kind === 'ollama' && (model.status === 'loading' || model.status === 'sleeping')) {
      problems.push({ path: `${at}.status`, message: 'an ollama model starts loaded or unloaded' });
    }
  });
  const running = node.models.filter((m) => RUNNING.includes(m.status)).length;
  if (hasModelResidency(node.kind) && node.modelsMax > 0 && running > node.modelsMax) {
    problems.push({
      path: 'models_max',
      message: `${running} models start running but models_max is ${node.modelsMax}`,
    });
  }
  return problems;
}
