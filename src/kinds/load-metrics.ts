// Pure: a node's load as its own Prometheus `/metrics` tells it — requests running, requests
// waiting, KV-cache use — read by the names each kind exports (PROTOCOLS.md §1.8, §2.5, SGLang).
// Parsed with parse-prometheus-text-format, never by hand.

import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** Which gauges carry a kind's load; the first name present in an answer wins (newer names first). */
export interface LoadDialect {
  readonly running: readonly string[];
  readonly waiting: readonly string[];
  /** A 0..1 fraction of the KV cache in use. */
  readonly kvUsage: readonly string[];
}

export interface LoadFigures {
  /** Requests the server is running now (summed over its models and engines). */
  readonly running: number;
  /** Requests queued inside the server (deferred, waiting). */
  readonly waiting: number;
  /** The fullest KV cache, 0..1; undefined = the server does not say. */
  readonly kvUsage: number | undefined;
}

export const VLLM_LOAD: LoadDialect = {
  running: ['vllm:num_requests_running'],
  waiting: ['vllm:num_requests_waiting'],
  // A 0..1 fraction despite the name; gpu_cache_usage_perc is its deprecated predecessor.
  kvUsage: ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'],
};

export const LLAMACPP_LOAD: LoadDialect = {
  running: ['llamacpp:requests_processing'],
  waiting: ['llamacpp:requests_deferred'],
  // Gone from current builds; older ones export it.
  kvUsage: ['llamacpp:kv_cache_usage_ratio'],
};

export const SGLANG_LOAD: LoadDialect = {
  running: ['sglang:num_running_reqs'],
  waiting: ['sglang:num_queue_reqs'],
  kvUsage: ['sglang:token_usage'],
};

/** For `auto` nodes: whichever kind's names the answer carries. */
export const ANY_LOAD: LoadDialect = {
  running: [...VLLM_LOAD.running, ...LLAMACPP_LOAD.running, ...SGLANG_LOAD.running],
  waiting: [...VLLM_LOAD.waiting, ...LLAMACPP_LOAD.waiting, ...SGLANG_LOAD.waiting],
  kvUsage: [...VLLM_LOAD.kvUsage, ...LLAMACPP_LOAD.kvUsage, ...SGLANG_LOAD.kvUsage],
};

/** The GET for a node's metrics; on a llama-server router, for one model that is loaded (never a load). */
export function loadMetricsPath(modelId?: string): string {
  // `autoload=false`: a model unloaded since the last listing is not loaded again by asking (§1.4).
  return modelId === undefined ? '/metrics' : `/metrics?model=${encodeURIComponent(modelId)}&autoload=false`;
}

function samplesOf(byName: ReadonlyMap<string, readonly number[]>, names: readonly string[]): readonly number[] | undefined {
  for (const name of names) {
    const values = byName.get(name);
    if (values !== undefined) return values;
  }
  return undefined;
}

/** The figures in a `/metrics` answer; undefined when it carries neither a running nor a waiting gauge. */
export function readLoadFigures(text: string, dialect: LoadDialect): LoadFigures | undefined {
  const wanted = new Set([...dialect.running, ...dialect.waiting, ...dialect.kvUsage]);
  const byName = new Map<string, number[]>();
  for (const family of parsePrometheusTextFormat(text)) {
    if (!wanted.has(family.name)) continue;
    const values = family.metrics.map((m) => Number(m.value)).filter((v) => Number.isFinite(v) && v >= 0);
    byName.set(family.name, values);
  }
  const running = samplesOf(byName, dialect.running);
  const waiting = samplesOf(byName, dialect.waiting);
  if (running === undefined && waiting === undefined) return undefined;
  const kv = samplesOf(byName, dialect.kvUsage);
  const sum = (values: readonly number[] | undefined): number => (values ?? []).reduce((a, b) => a + b, 0);
  return {
    running: sum(running),
    waiting: sum(waiting),
    kvUsage: kv === undefined || kv.length === 0 ? undefined : Math.min(1, Math.max(...kv)),
  };
}

/** Figures of several answers (a router's loaded models) as one node's. */
export function addLoadFigures(parts: readonly LoadFigures[]): LoadFigures {
  let kvUsage: number | undefined;
  for (const p of parts) if (p.kvUsage !== undefined) kvUsage = Math.max(kvUsage ?? 0, p.kvUsage);
  return {
    running: parts.reduce((a, p) => a + p.running, 0),
    waiting: parts.reduce((a, p) => a + p.waiting, 0),
    kvUsage,
  };
}
