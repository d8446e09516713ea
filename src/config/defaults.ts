// Every default value of the gateway's own tables, in the loaded (camelCase, ms, bytes) form; a
// feature table's defaults are its own (e.g. mesh/config/mesh-config.ts MESH_DEFAULTS).
// docs/config.md and examples/switchyard.toml restate these; test/unit/config/defaults.test.ts keeps them honest.
import type { GatewayConfig, KvMode, ModelsConfig, NodeKind } from './types.ts';

const MIB = 1_048_576;

/** The tables that are defaults whole, as GatewayConfig has them; the rest are defaults in part. */
export interface ConfigDefaults extends Pick<
  GatewayConfig,
  'server' | 'admin' | 'health' | 'discovery' | 'upstream' | 'load' | 'routing'
> {
  readonly models: Pick<ModelsConfig, 'operatorHoldMs'>;
  readonly node: { readonly kind: NodeKind; readonly kv: KvMode; readonly weight: number; readonly wakeTimeoutMs: number };
}

export const CONFIG_DEFAULTS: ConfigDefaults = Object.freeze({
  server: Object.freeze({
    listen: Object.freeze({ host: '127.0.0.1', port: 8080 }),
    maxRequestBodyBytes: 10 * MIB,
    maxHeaderBytes: 16 * 1024,
    headerTimeoutMs: 10_000,
    listenBacklog: 4096,
    requestTimeoutMs: 60_000,
    drainTimeoutMs: 30_000,
    apiKeys: Object.freeze([]),
    workers: 1,
    corsOrigins: Object.freeze([]),
    stateDir: undefined,
  }),
  admin: Object.freeze({ listen: undefined, token: undefined, hosts: Object.freeze([]) }),
  health: Object.freeze({ intervalMs: 5_000, timeoutMs: 2_000, failThreshold: 3 }),
  discovery: Object.freeze({
    intervalMs: 10_000,
    timeoutMs: 5_000,
    maxBodyBytes: 4 * MIB,
    missWaitMs: 0,
    missCooldownMs: 2_000,
    maxModelsPerNode: 1024,
    maxModelIdBytes: 256,
    capacityRequestsPerPoll: 64,
  }),
  upstream: Object.freeze({
    connectTimeoutMs: 5_000,
    // LLM prefill of a long prompt can take minutes before the first header arrives.
    headersTimeoutMs: 300_000,
    bodyIdleTimeoutMs: 300_000,
    // A stream's first token: time for the prefill of an agent-sized prompt (~30k tokens) on a modest
    // GPU or Apple silicon, well short of the 300 s a silent node held its client before.
    firstTokenTimeoutMs: 120_000,
    // One generation may legitimately stream for many minutes; this only bounds runaways.
    totalTimeoutMs: 3_600_000,
    maxHeldBodyBytes: 4 * MIB,
    maxHeldBytesTotal: 64 * MIB,
    ejectAfterFailures: 5,
    ejectForMs: 10_000,
    maxConnections: 256,
    connectionWaitMs: 5_000,
  }),
  // Well under the 10 s the least-loaded policy can live with; figures three scrapes old are stale.
  load: Object.freeze({ intervalMs: 5_000, timeoutMs: 2_000, maxBodyBytes: MIB, staleAfterMs: 15_000 }),
  routing: Object.freeze({
    policy: 'least-in-flight',
    affinityHeader: 'x-session-id',
    affinityPrefixChars: 256,
    affinityEpsilon: 0.25,
    sessions: true,
    // Past an agent's think time between turns; a node's prefix cache rarely outlives it anyway.
    sessionTtlMs: 1_800_000,
    cacheThreshold: 0.5,
    cacheBalanceAbs: 8,
    cacheBalanceRel: 1.5,
    cachePromptChars: 8_192,
    cacheMaxTreeChars: 4_000_000,
    queueTimeoutMs: 30_000,
    maxQueue: 100,
    // A third of queue_timeout: a starved batch tenant's oldest request reaches interactive after 20 s, before it would time out.
    queueAgingMs: 10_000,
    loadOnDemand: true,
    // Serve an API no node for the model speaks over one they do (docs/protocols-endpoints.md, "Translation").
    translate: true,
    resumableStreams: true,
    completionReserveTokens: 512,
    tokenizeTimeoutMs: 500,
    // Long enough for a loaded model to finish a short burst, short enough that others are not starved.
    swapAfterMs: 5_000,
    loadTimeoutMs: 120_000,
    // A llama-server router from build 10313 queues its switches itself: the gateway does not again (docs/protocols.md §7.z5).
    routerQueue: 'auto',
  }),
  // Long enough to use a model the operator loaded by hand, short enough that a forgotten one gives its slot back.
  models: Object.freeze({ operatorHoldMs: 600_000 }),
  // llama.cpp's default (-np auto) runs unified KV: every slot may use the whole n_ctx pool.
  node: Object.freeze({ kind: 'auto', kv: 'auto', weight: 1, wakeTimeoutMs: 120_000 }),
});
