// The TOML file's shape (snake_case keys) and the checks on each value, producing the camelCase
// GatewayConfig. Every table is strict: an unknown key is a problem, because a misspelt key that is
// silently ignored leaves a default in force that the operator believes they changed.
// Cross-entry checks (duplicate names, references between sections) are cross-checks.ts's: they run
// over the document beside this schema, so a problem here never hides one there.
import { z } from 'zod';
import { resolveApiKey, type EnvVars } from './api-key.ts';
import { CONFIG_DEFAULTS } from './defaults.ts';
import { parseListenAddress } from './listen-address.ts';
import { normalizeNodeUrl } from './node-url.ts';
import { parseWake } from './wake.ts';
import { INFERENCE_ENDPOINTS } from './endpoints.ts';
import { KV_MODES, MAX_WORKERS, NODE_KINDS, type GatewayConfig, type ModelSpec, type NodeSpec } from './types.ts';
import { loadSignalsSchema, policyName, routingSchema } from './routing-schema.ts';
import { meshSchema } from './mesh-schema.ts';
import { nodeSourcesSchema } from './node-sources-schema.ts';
import { clusterSchema } from './cluster-schema.ts';
import { logSchema } from './log-schema.ts';
import { tracingSchema } from './tracing-schema.ts';
import { corsOriginsSchema } from './cors-origins.ts';
import { adminHostsSchema } from './admin-hosts.ts';
import type { SecretFileReader } from './client-keys.ts';
import { tenantsSchema, tenantsWithDefault } from './tenants-schema.ts';
import {
  durationMs,
  name,
  nodeName,
  nonNegativeDurationMs,
  parsedBy,
  positiveDurationMs,
  positiveUpTo,
  positiveSizeBytes,
  table,
  wholeAtLeastOne,
} from './schema-parts.ts';

function secretSchema(env: EnvVars) {
  return z.string().pipe(parsedBy((value: string) => resolveApiKey(value, env)));
}

function serverSchema(env: EnvVars) {
  return table({
    listen: z.string().pipe(parsedBy(parseListenAddress)).default(CONFIG_DEFAULTS.server.listen),
    max_request_body_bytes: positiveSizeBytes.default(CONFIG_DEFAULTS.server.maxRequestBodyBytes),
    max_header_bytes: positiveSizeBytes.default(CONFIG_DEFAULTS.server.maxHeaderBytes),
    header_timeout: positiveDurationMs.default(CONFIG_DEFAULTS.server.headerTimeoutMs),
    listen_backlog: wholeAtLeastOne.max(65_535, { error: 'must be at most 65535' }).default(CONFIG_DEFAULTS.server.listenBacklog),
    request_timeout: positiveDurationMs.default(CONFIG_DEFAULTS.server.requestTimeoutMs),
    drain_timeout: nonNegativeDurationMs.default(CONFIG_DEFAULTS.server.drainTimeoutMs),
    api_keys: z.array(secretSchema(env), { error: 'must be an array of keys (literal or "env:VAR")' }).default([]),
    workers: workersSchema.default(CONFIG_DEFAULTS.server.workers),
    cors_origins: corsOriginsSchema.default(() => {
      const origins = CONFIG_DEFAULTS.server.corsOrigins;
      return origins === '*' ? origins : [...origins];
    }),
    state_dir: name.optional(),
  }).transform((server) => ({
    listen: server.listen,
    maxRequestBodyBytes: server.max_request_body_bytes,
    maxHeaderBytes: server.max_header_bytes,
    headerTimeoutMs: server.header_timeout,
    listenBacklog: server.listen_backlog,
    requestTimeoutMs: server.request_timeout,
    drainTimeoutMs: server.drain_timeout,
    apiKeys: server.api_keys,
    workers: server.workers,
    corsOrigins: server.cors_origins,
    stateDir: server.state_dir,
  }));
}

/** An operator's load never holds its node for longer than a day ([models] operator_hold). */
const MAX_OPERATOR_HOLD_MS = 86_400_000;

/** How many event loops serve requests: a whole number from 1 to MAX_WORKERS, or "auto" (one per core). */
const WORKERS_ERROR = `must be a whole number from 1 to ${MAX_WORKERS}, or "auto" (one per available core)`;
const workersSchema = z.union(
  [
    z.literal('auto'),
    z.int({ error: WORKERS_ERROR }).min(1, { error: WORKERS_ERROR }).max(MAX_WORKERS, { error: WORKERS_ERROR }),
  ],
  { error: WORKERS_ERROR },
);

function adminSchema(env: EnvVars) {
  return table({
    listen: z.string().pipe(parsedBy(parseListenAddress)).optional(),
    token: secretSchema(env).optional(),
    hosts: adminHostsSchema.default(() => [...CONFIG_DEFAULTS.admin.hosts]),
  }).transform((admin) => ({ listen: admin.listen, token: admin.token, hosts: admin.hosts }));
}

const healthSchema = table({
  interval: positiveDurationMs.default(CONFIG_DEFAULTS.health.intervalMs),
  timeout: positiveDurationMs.default(CONFIG_DEFAULTS.health.timeoutMs),
  fail_threshold: z
    .int({ error: 'must be a whole number of at least 1' })
    .min(1, { error: 'must be a whole number of at least 1' })
    .default(CONFIG_DEFAULTS.health.failThreshold),
}).transform((health) => ({ intervalMs: health.interval, timeoutMs: health.timeout, failThreshold: health.fail_threshold }));

const discoverySchema = table({
  interval: positiveDurationMs.default(CONFIG_DEFAULTS.discovery.intervalMs),
  timeout: positiveDurationMs.default(CONFIG_DEFAULTS.discovery.timeoutMs),
  max_body_bytes: positiveSizeBytes.default(CONFIG_DEFAULTS.discovery.maxBodyBytes),
  miss_wait: durationMs.default(CONFIG_DEFAULTS.discovery.missWaitMs),
  miss_cooldown: durationMs.default(CONFIG_DEFAULTS.discovery.missCooldownMs),
  max_models_per_node: wholeAtLeastOne.default(CONFIG_DEFAULTS.discovery.maxModelsPerNode),
  max_model_id_bytes: wholeAtLeastOne.default(CONFIG_DEFAULTS.discovery.maxModelIdBytes),
  capacity_requests_per_poll: wholeAtLeastOne.default(CONFIG_DEFAULTS.discovery.capacityRequestsPerPoll),
}).transform((discovery) => ({
  intervalMs: discovery.interval,
  timeoutMs: discovery.timeout,
  maxBodyBytes: discovery.max_body_bytes,
  missWaitMs: discovery.miss_wait,
  missCooldownMs: discovery.miss_cooldown,
  maxModelsPerNode: discovery.max_models_per_node,
  maxModelIdBytes: discovery.max_model_id_bytes,
  capacityRequestsPerPoll: discovery.capacity_requests_per_poll,
}));

const upstreamSchema = table({
  connect_timeout: positiveDurationMs.default(CONFIG_DEFAULTS.upstream.connectTimeoutMs),
  headers_timeout: positiveDurationMs.default(CONFIG_DEFAULTS.upstream.headersTimeoutMs),
  body_idle_timeout: positiveDurationMs.default(CONFIG_DEFAULTS.upstream.bodyIdleTimeoutMs),
  first_token_timeout: nonNegativeDurationMs.default(CONFIG_DEFAULTS.upstream.firstTokenTimeoutMs),
  total_timeout: nonNegativeDurationMs.default(CONFIG_DEFAULTS.upstream.totalTimeoutMs),
  max_held_body_bytes: positiveSizeBytes.default(CONFIG_DEFAULTS.upstream.maxHeldBodyBytes),
  max_held_bytes_total: positiveSizeBytes.default(CONFIG_DEFAULTS.upstream.maxHeldBytesTotal),
  eject_after_failures: wholeAtLeastOne.default(CONFIG_DEFAULTS.upstream.ejectAfterFailures),
  eject_for: positiveDurationMs.default(CONFIG_DEFAULTS.upstream.ejectForMs),
  max_connections: wholeAtLeastOne.default(CONFIG_DEFAULTS.upstream.maxConnections),
  connection_wait: positiveDurationMs.default(CONFIG_DEFAULTS.upstream.connectionWaitMs),
}).transform((upstream) => ({
  connectTimeoutMs: upstream.connect_timeout,
  headersTimeoutMs: upstream.headers_timeout,
  bodyIdleTimeoutMs: upstream.body_idle_timeout,
  firstTokenTimeoutMs: upstream.first_token_timeout,
  totalTimeoutMs: upstream.total_timeout,
  maxHeldBodyBytes: upstream.max_held_body_bytes,
  maxHeldBytesTotal: upstream.max_held_bytes_total,
  ejectAfterFailures: upstream.eject_after_failures,
  ejectForMs: upstream.eject_for,
  maxConnections: upstream.max_connections,
  connectionWaitMs: upstream.connection_wait,
}));

const modelSchema = table({
  name,
  group: name.optional(),
  aliases: z.array(name, { error: 'must be an array of strings' }).default([]),
  policy: policyName.optional(),
  pin: z.boolean({ error: 'must be true or false' }).optional(),
  preload: z.boolean({ error: 'must be true or false' }).optional(),
  warm: z
    .number({ error: 'must be a whole number of nodes' })
    .int({ error: 'must be a whole number of nodes' })
    .min(0, { error: 'must be 0 or more' })
    .max(1000, { error: 'must be at most 1000' })
    .optional(),
}).transform((model): ModelSpec => {
  const spec: ModelSpec = { name: model.name, group: model.group, aliases: model.aliases, policy: model.policy };
  if (model.pin === undefined && model.preload === undefined && model.warm === undefined) return spec;
  return { ...spec, desired: { pin: model.pin ?? false, preload: model.preload ?? false, warm: model.warm ?? 0 } };
});

const modelsSchema = table({
  default: name.optional(),
  available: z.array(modelSchema, { error: 'must be an array of tables, written [[models.available]]' }).default([]),
  operator_hold: positiveDurationMs
    .pipe(z.number().max(MAX_OPERATOR_HOLD_MS, { error: 'must be at most 24h' }))
    .default(CONFIG_DEFAULTS.models.operatorHoldMs),
}).transform((models) => ({ default: models.default, available: models.available, operatorHoldMs: models.operator_hold }));

function nodesSchema(env: EnvVars) {
  const nodeSchema = table({
    name: nodeName,
    url: z.string().pipe(parsedBy(normalizeNodeUrl)),
    api_key: z
      .string()
      .pipe(parsedBy((value: string) => resolveApiKey(value, env)))
      .optional(),
    kind: z.enum(NODE_KINDS, { error: `must be one of: ${NODE_KINDS.join(', ')}` }).default(CONFIG_DEFAULTS.node.kind),
    group: name.optional(),
    kv: z.enum(KV_MODES, { error: `must be one of: ${KV_MODES.join(', ')}` }).default(CONFIG_DEFAULTS.node.kv),
    weight: positiveUpTo(1_000_000).default(CONFIG_DEFAULTS.node.weight),
    wake: table({
      mac: z.string().optional(),
      broadcast: z.string().optional(),
      command: z.array(z.string(), { error: 'must be an array of strings: the program and its arguments' }).optional(),
    })
      .pipe(parsedBy(parseWake))
      .optional(),
    wake_timeout: positiveDurationMs.default(CONFIG_DEFAULTS.node.wakeTimeoutMs),
    first_token_timeout: nonNegativeDurationMs.optional(),
    models: z
      .array(name, { error: 'must be an array of model ids or patterns, like ["llama-*"]' })
      .min(1, { error: 'must list at least one model id or pattern; leave it out to allow any model' })
      .optional(),
    endpoints: z
      .array(z.enum(INFERENCE_ENDPOINTS, { error: `must be one of: ${INFERENCE_ENDPOINTS.join(', ')}` }), {
        error: 'must be an array of endpoint paths, like ["/v1/chat/completions", "/v1/messages"]',
      })
      .min(1, { error: "must list at least one endpoint; leave it out for the kind's own set" })
      .optional(),
    warm: z.boolean({ error: 'must be true or false' }).optional(),
  }).transform((node): NodeSpec => ({
    name: node.name,
    url: node.url,
    apiKey: node.api_key,
    kind: node.kind,
    group: node.group,
    kv: node.kv,
    weight: node.weight,
    wake: node.wake,
    wakeTimeoutMs: node.wake_timeout,
    ...(node.models === undefined ? {} : { allowedModels: node.models }),
    ...(node.endpoints === undefined ? {} : { endpoints: [...new Set(node.endpoints)] }),
    ...(node.warm === false ? { warm: false as const } : {}),
    ...(node.first_token_timeout === undefined ? {} : { firstTokenTimeoutMs: node.first_token_timeout }),
  }));

  return z.array(nodeSchema, { error: 'must be an array of tables, written [[nodes]]' });
}

/**
 * The whole file. `env` resolves `api_key = "env:VAR"`; `readFile` the tenants' `file:` keys. Both
 * are parameters so the schema itself does no I/O.
 */
export function gatewayConfigSchema(env: EnvVars, readFile: SecretFileReader): z.ZodType<GatewayConfig> {
  return table({
    server: serverSchema(env).prefault({}),
    admin: adminSchema(env).prefault({}),
    health: healthSchema.prefault({}),
    discovery: discoverySchema.prefault({}),
    upstream: upstreamSchema.prefault({}),
    load: loadSignalsSchema.prefault({}),
    routing: routingSchema.prefault({}),
    models: modelsSchema.prefault({}),
    nodes: nodesSchema(env).prefault([]),
    node_sources: nodeSourcesSchema(env).optional(),
    mesh: meshSchema.optional(),
    cluster: clusterSchema(env).optional(),
    tenants: tenantsSchema(env, readFile),
    log: logSchema.prefault({}),
    tracing: tracingSchema.optional(),
    // `[batch]`: the Files and Batch API's bounds, read by its feature (src/batch/batch-config.ts checks them).
    batch: z.record(z.string(), z.unknown(), { error: 'must be a table' }).optional(),
  })
    .superRefine((config, ctx) => {
      // A fleet found at run time ([[node_sources]]) may start with no [[nodes]] at all.
      if (config.nodes.length === 0 && (config.node_sources ?? []).length === 0)
        ctx.addIssue({
          code: 'custom',
          path: ['nodes'],
          message: 'at least one [[nodes]] entry is required (or a [[node_sources]] entry)',
        });
    })
    .transform(({ node_sources: nodeSources, ...config }) => ({
      ...config,
      ...(nodeSources === undefined || nodeSources.length === 0 ? {} : { nodeSources }),
      tenants: tenantsWithDefault(config.tenants, config.server.apiKeys),
    }));
}
