// The validated, fully-defaulted, frozen gateway configuration. config/load.ts is the only producer.
// Durations are milliseconds, sizes are bytes; names carry the unit.

import type { CorsOrigins } from './cors-origins.ts';
import type { TenantSpec } from './tenant-types.ts';
import type { InferenceEndpoint } from './endpoints.ts';
import type { LogConfig } from './log-types.ts';
import type { TracingConfig } from './tracing-types.ts';
import type { MeshConfig } from './mesh-types.ts';
import type { ClusterConfig } from './cluster-types.ts';

export type { MeshConfig, MeshSitePin, MeshStaticModel } from './mesh-types.ts';
export type { ClusterConfig } from './cluster-types.ts';

export { DEFAULT_TENANT, TENANT_PRIORITIES, type TenantPriority, type TenantSpec } from './tenant-types.ts';

export const NODE_KINDS = ['auto', 'vllm', 'llamacpp', 'ollama', 'sglang', 'openai'] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

/**
 * How a llama.cpp node's slots share KV cache: one pool of n_ctx, or n_ctx per slot; `auto` = what
 * a router's listing says per model (its `status.args`), else unified.
 */
export const KV_MODES = ['auto', 'unified', 'per-slot'] as const;
export type KvMode = (typeof KV_MODES)[number];

/** How a node is chosen among the ones that can take a request (src/routing/policies/). */
export const POLICY_NAMES = ['least-loaded', 'least-in-flight', 'round-robin', 'weighted', 'affinity', 'cache-aware'] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];

export interface ListenAddress {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
}

export interface ServerConfig {
  readonly listen: ListenAddress;
  readonly maxRequestBodyBytes: number;
  /** Largest request head (request line + headers) a client may send. */
  readonly maxHeaderBytes: number;
  /**
   * The accept queue each listener asks the kernel for (listen(2)'s backlog; Linux caps it at
   * net.core.somaxconn): connections the kernel completes while the event loop is busy. Node's
   * default, 511, lasts half a second at 1,000 new connections a second; past it SYNs are dropped
   * and the client waits a retransmission (1 s, then 3 s) before it is even connected.
   */
  readonly listenBacklog: number;
  /** Time a client has to send its request headers (slowloris bound). */
  readonly headerTimeoutMs: number;
  /** Time a client has to send its whole request, headers and body. */
  readonly requestTimeoutMs: number;
  /** On SIGTERM, how long in-flight requests may finish before the gateway exits anyway. */
  readonly drainTimeoutMs: number;
  /** Client API keys (resolved); empty = no client authentication. Never logged. */
  readonly apiKeys: readonly string[];
  /**
   * Event loops serving requests (worker threads on one listener); "auto": one per available core.
   * The control plane and every lease stay on one thread whatever the number.
   */
  readonly workers: number | 'auto';
  /**
   * Browser origins allowed to call the public endpoints (CORS): "*" = every origin, a list =
   * exactly those, empty = CORS off (no preflight answered, no Access-Control-* header sent).
   */
  readonly corsOrigins: CorsOrigins;
  /**
   * Where the gateway keeps what must survive a restart (tenants' usage and budgets, in SQLite);
   * undefined = kept in memory only (a restart forgets today's usage).
   */
  readonly stateDir: string | undefined;
}

/** The most request workers a gateway runs (each is a thread with its own heap). */
export const MAX_WORKERS = 64;

export interface AdminConfig {
  /** A separate listener for /admin/* and /metrics; undefined = served on the main listener. */
  readonly listen: ListenAddress | undefined;
  /** Bearer token required on /admin/* and /metrics; undefined = mutations only from loopback. */
  readonly token: string | undefined;
  /** DNS names the admin routes answer for (Host), besides IP literals, localhost and the listen names; lowercase. */
  readonly hosts: readonly string[];
}

export interface HealthConfig {
  readonly intervalMs: number;
  readonly timeoutMs: number;
  /** Consecutive failures to dead (asleep for nodes with `wake`); degraded from half of it, rounded down, at least 1. */
  readonly failThreshold: number;
}

export interface DiscoveryConfig {
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly maxBodyBytes: number;
  /** How long a request for an unknown model waits for a refresh round; 0 = do not wait. */
  readonly missWaitMs: number;
  /** Minimum time between two refresh-on-miss rounds for one node. */
  readonly missCooldownMs: number;
  /** Entries kept from one node's listing; the rest are dropped (loaded first, then by id). */
  readonly maxModelsPerNode: number;
  /** Longest model id (UTF-8 bytes) kept from a listing; longer entries are dropped. */
  readonly maxModelIdBytes: number;
  /** Per-model capacity requests (llama.cpp `/props?model=`) per node per poll; the rest wait their turn. */
  readonly capacityRequestsPerPoll: number;
}

/** The load loop: each node's own /metrics, read for the `least-loaded` policy. */
export interface LoadSignalsConfig {
  readonly intervalMs: number;
  /** Bound on one node's whole scrape. */
  readonly timeoutMs: number;
  /** Bound on one /metrics answer. */
  readonly maxBodyBytes: number;
  /** Figures older than this are not trusted: routing falls back to the in-flight count. */
  readonly staleAfterMs: number;
}

export interface UpstreamConfig {
  readonly connectTimeoutMs: number;
  /** Time to the upstream's response headers (time to first byte). */
  readonly headersTimeoutMs: number;
  /** Longest silence between two body chunks. */
  readonly bodyIdleTimeoutMs: number;
  /**
   * A streamed answer's first token: from sending the request (or, for a request that loads its
   * model, from the answer's head) to the first generated text; past it the node is abandoned and the
   * request fails over, nothing having reached the client (attempt/first-token-deadline.ts). 0 = none.
   */
  readonly firstTokenTimeoutMs: number;
  /** Bound on one whole upstream exchange, streaming included; 0 = none. */
  readonly totalTimeoutMs: number;
  /** Largest whole JSON answer held until it is complete and parses; bigger ones stream unchecked. */
  readonly maxHeldBodyBytes: number;
  /** Bound on the answer bytes held across all requests at once; past it answers stream unchecked. */
  readonly maxHeldBytesTotal: number;
  /** Consecutive connection failures or 5xx answers after which a node is skipped for a while. */
  readonly ejectAfterFailures: number;
  /** How long an ejected node is skipped (it is re-probed at once). */
  readonly ejectForMs: number;
  /** Connections per node; a node with this many requests in flight counts as busy. */
  readonly maxConnections: number;
  /** Longest a request waits for one of a node's connections before it fails over. */
  readonly connectionWaitMs: number;
}

export interface RoutingConfig {
  /** The selection policy for models without their own `policy`. */
  readonly policy: PolicyName;
  /** `affinity`: the request header whose value is the key (lower case). */
  readonly affinityHeader: string;
  /** `affinity`: without a header or `user`, the key is a hash of the prompt's first this many characters. */
  readonly affinityPrefixChars: number;
  /** `affinity`: a node holds at most (1 + this) x the average in-flight requests (a session's node too). */
  readonly affinityEpsilon: number;
  /** Keep each session (what agents send: docs/routing.md, "Sessions") on its node; false = no session key is read. */
  readonly sessions: boolean;
  /** How long a session, or an answer's id, is remembered after its last use (ms). */
  readonly sessionTtlMs: number;
  /** `cache-aware`: route by cache when the best prefix match covers more than this fraction. */
  readonly cacheThreshold: number;
  /** `cache-aware`: in-flight spread (max - min) past which load wins over cache... */
  readonly cacheBalanceAbs: number;
  /** ...when the busiest candidate also has more than this many times the least busy one's load. */
  readonly cacheBalanceRel: number;
  /** `cache-aware`: prompt characters considered per request. */
  readonly cachePromptChars: number;
  /** `cache-aware`: characters the prefix tree stores across all nodes (least recently used leaves go first). */
  readonly cacheMaxTreeChars: number;
  /** Longest a request waits in a model's queue for a slot before a 429. */
  readonly queueTimeoutMs: number;
  /** Requests waiting per model beyond which new ones get 429 at once. */
  readonly maxQueue: number;
  /** A tenant's oldest queued request waiting this long unserved is raised one class (batch → standard → interactive); 0 = never. */
  readonly queueAgingMs: number;
  /** Route to nodes that would load the model on demand when no node has it loaded. */
  readonly loadOnDemand: boolean;
  /** Serve a client API no node for the model speaks over one they do (Messages over Chat Completions); false = never translate. */
  readonly translate: boolean;
  /** Tokens reserved for the completion when a request sets no max_tokens. */
  readonly completionReserveTokens: number;
  /** Bound on asking a node's own tokenizer for an exact prompt size. */
  readonly tokenizeTimeoutMs: number;
  /** A switch on a full llama-server router waiting this long holds new requests for its loaded models. */
  readonly swapAfterMs: number;
  /** Longest a request that loads its model waits for the answer's head before it is cancelled. */
  readonly loadTimeoutMs: number;
}

export interface ModelSpec {
  readonly name: string;
  readonly group: string | undefined;
  readonly aliases: readonly string[];
  /** This model's selection policy; undefined = `[routing] policy`. */
  readonly policy: PolicyName | undefined;
  /** `pin`, `preload`, `warm`: what the gateway keeps loaded (docs/models.md); absent = none of them set. */
  readonly desired?: DesiredModelState;
}

/** A model's desired state: the reconciler loads it to match, and a switch never evicts a pinned one. */
export interface DesiredModelState {
  /** Never chosen as the model a switch or a load unloads; an unload of it is refused. */
  readonly pin: boolean;
  /** Loaded on every node that lists it (and can load on request) at start and after that node wakes. */
  readonly preload: boolean;
  /** At least this many nodes keep it loaded (0 = no minimum). */
  readonly warm: number;
}

export interface ModelsConfig {
  readonly default: string | undefined;
  readonly available: readonly ModelSpec[];
  /** How long an admin load holds its model on its node against the reconciler (docs/models.md). */
  readonly operatorHoldMs: number;
}

/** How to wake a node that powers down when idle. */
export type WakeSpec =
  | { readonly kind: 'wol'; readonly mac: string; readonly broadcast: ListenAddress }
  | { readonly kind: 'command'; readonly argv: readonly string[] };

export interface NodeSpec {
  /** Unique; the node's identity in logs, metrics and reload carry-over. */
  readonly name: string;
  /** Base URL without a trailing slash, e.g. "http://10.0.0.5:8080". */
  readonly url: string;
  /** Resolved secret (from a literal or "env:VAR"); never logged. */
  readonly apiKey: string | undefined;
  readonly kind: NodeKind;
  readonly group: string | undefined;
  /** llama.cpp KV sharing; decides the per-model context budget. */
  readonly kv: KvMode;
  /** Relative share of traffic under the `weighted` policy (> 0). */
  readonly weight: number;
  /** Set for nodes that sleep: failing health then means asleep, not dead. */
  readonly wake: WakeSpec | undefined;
  /** How long requests wait for a woken node before a 503. */
  readonly wakeTimeoutMs: number;
  /** Model id patterns (`*`, `?`) this node may serve; absent = whatever it lists. */
  readonly allowedModels?: readonly string[];
  /** `warm = false`: never chosen to keep a model warm (`[[models.available]] warm`); absent = may be. */
  readonly warm?: false;
  /** `endpoints`: the inference endpoints this node serves, replacing its kind's set; absent = its kind's. */
  readonly endpoints?: readonly InferenceEndpoint[];
  /** `first_token_timeout`: this node's own first-token deadline (0 = none); absent = `[upstream] first_token_timeout`. */
  readonly firstTokenTimeoutMs?: number;
  /** The `[[node_sources]]` entry that found this node; absent = the `[[nodes]]` list (the static source). */
  readonly source?: string;
}

export interface GatewayConfig {
  readonly server: ServerConfig;
  readonly admin: AdminConfig;
  readonly health: HealthConfig;
  readonly discovery: DiscoveryConfig;
  readonly upstream: UpstreamConfig;
  readonly load: LoadSignalsConfig;
  readonly routing: RoutingConfig;
  readonly models: ModelsConfig;
  readonly nodes: readonly NodeSpec[];
  /** `[[node_sources]]`: nodes found at run time (DNS), beside `nodes`; absent = none. */
  readonly nodeSources?: readonly NodeSourceSpec[] | undefined;
  /**
   * `[[tenants]]`, then `default` holding `[server] api_keys` when there are any. Empty = no client
   * authentication: every request is the open `default` tenant's, without limits.
   */
  readonly tenants: readonly TenantSpec[];
  /** Federation (`[mesh]`); undefined = the gateway runs alone. */
  readonly mesh?: MeshConfig | undefined;
  /** Replicas sharing slot leases through a store (`[cluster]`); undefined = this gateway alone. */
  readonly cluster?: ClusterConfig | undefined;
  /** `[log]`: the request log; undefined (a config built in code) = off. */
  readonly log?: LogConfig | undefined;
  /** `[tracing]`: OpenTelemetry traces; undefined = off (no SDK loaded). */
  readonly tracing?: TracingConfig | undefined;
  /** `[batch]` as written: the Files and Batch API's bounds, checked by its feature (src/batch/batch-config.ts); undefined = defaults. */
  readonly batch?: Readonly<Record<string, unknown>> | undefined;
}

// `[[node_sources]]`: where nodes come from besides the `[[nodes]]` list. A DNS source resolves a
// name (A/AAAA, with the source's port) or an SRV record (each target with its own port) on an
// interval, and every address it answers is one node.

/** What a DNS source asks: a name's addresses (A and AAAA) at one port, or an SRV record's targets. */
export type DnsQuery =
  { readonly type: 'address'; readonly host: string; readonly port: number } | { readonly type: 'srv'; readonly record: string };

export interface DnsNodeSourceSpec {
  readonly kind: 'dns';
  /** Unique among the sources; the prefix of every node name it yields and the `source` shown per node. */
  readonly name: string;
  readonly query: DnsQuery;
  /** `http` or `https`: how the nodes' URLs start. */
  readonly scheme: 'http' | 'https';
  /** The server kind of every node it yields. */
  readonly nodeKind: NodeKind;
  readonly group: string | undefined;
  /** Resolved secret (literal or "env:VAR") every node is asked with; never logged. */
  readonly apiKey: string | undefined;
  /** `resolver = "host:port"`: the DNS server asked; absent = the system's resolver (/etc/resolv.conf). */
  readonly resolver: { readonly host: string; readonly port: number } | undefined;
  /** How often it resolves when the answer carries no TTL (SRV) or a TTL outside the bounds. */
  readonly intervalMs: number;
  /** TTL bounds: an answer's TTL is honoured, clamped to [minTtlMs, maxTtlMs]. */
  readonly minTtlMs: number;
  readonly maxTtlMs: number;
  /** One lookup's bound (each attempt). */
  readonly timeoutMs: number;
}

export type NodeSourceSpec = DnsNodeSourceSpec;

export const NODE_SOURCE_KINDS = ['dns'] as const;

/** One problem found while loading a config, with the key path it concerns. */
export interface ConfigProblem {
  /** e.g. "nodes[2].url"; "" for the whole file (e.g. a TOML syntax error). */
  readonly path: string;
  readonly message: string;
}

export type LoadResult =
  { readonly ok: true; readonly config: GatewayConfig } | { readonly ok: false; readonly problems: readonly ConfigProblem[] };
