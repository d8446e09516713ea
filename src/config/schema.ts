// The TOML file's shape (snake_case keys) and the checks on each value, producing the camelCase
// GatewayConfig. Every table is strict: an unknown key is a problem, because a misspelt key that is
// silently ignored leaves a default in force that the operator believes they changed.
// Cross-entry checks (duplicate names, references) run once the entries they compare are well-typed.
import { z } from 'zod';
import { resolveApiKey, type EnvVars } from './api-key.ts';
import { CONFIG_DEFAULTS } from './defaults.ts';
import { parseDurationMs } from './duration.ts';
import { parseListenAddress } from './listen-address.ts';
import { findModelNameClashes, findNodeNameClashes, findUnservedModelGroups, isDeclaredModel, type NameClash } from './name-clashes.ts';
import { normalizeNodeUrl } from './node-url.ts';
import { parseWake } from './wake.ts';
import type { ParseResult } from './parse-result.ts';
import { parseSizeBytes } from './size.ts';
import { KV_MODES, NODE_KINDS, POLICY_NAMES, type GatewayConfig, type ModelSpec, type NodeSpec } from './types.ts';

/** A strict TOML table whose unknown-key problem lists the keys it does accept. */
function table<const Shape extends z.ZodRawShape>(shape: Shape) {
  const expected = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code === 'unrecognized_keys') return `unknown key; expected one of: ${expected}`;
      if (issue.code === 'invalid_type') return 'must be a table';
      return undefined;
    },
  });
}

/** Runs a ParseResult-returning parser as a zod step, turning its message into an issue. */
function parsedBy<I, T>(parse: (input: I) => ParseResult<T>) {
  return z.transform<I, T>((input, ctx) => {
    const result = parse(input);
    if (result.ok) return result.value;
    ctx.issues.push({ code: 'custom', message: result.message, input });
    return z.NEVER;
  });
}

function reportClashes(ctx: z.core.$RefinementCtx, clashes: readonly NameClash[], prefix: readonly (string | number)[] = []): void {
  for (const clash of clashes) ctx.addIssue({ code: 'custom', path: [...prefix, ...clash.path], message: clash.message });
}

const durationMs = z.unknown().pipe(parsedBy(parseDurationMs));
const positiveDurationMs = durationMs.pipe(z.number().positive({ error: 'must be longer than 0s' }));
const positiveSizeBytes = z
  .unknown()
  .pipe(parsedBy(parseSizeBytes))
  .pipe(z.number().positive({ error: 'must be more than 0 bytes' }));

const name = z
  .string()
  .min(1, { error: 'must not be empty' })
  .refine((text) => text.trim() === text, { error: 'must not start or end with whitespace' });

/**
 * Node names travel in the `x-switchyard-node` response header, metrics labels and logs: a
 * character outside this set (a newline, `α`) would make every answer through the node fail.
 */
export const NODE_NAME_RULE = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$/;
const nodeName = name.refine((text) => text === '' || text.trim() !== text || NODE_NAME_RULE.test(text), {
  error: 'must be 1 to 64 characters: letters A-Z a-z, digits, and . _ : @ - (not first)',
});

const nonNegativeDurationMs = durationMs.pipe(z.number().min(0, { error: 'must not be negative' }));
const wholeAtLeastOne = z.int({ error: 'must be a whole number of at least 1' }).min(1, { error: 'must be a whole number of at least 1' });

function secretSchema(env: EnvVars) {
  return z.string().pipe(parsedBy((value: string) => resolveApiKey(value, env)));
}

function serverSchema(env: EnvVars) {
  return table({
    listen: z.string().pipe(parsedBy(parseListenAddress)).default(CONFIG_DEFAULTS.server.listen),
    max_request_body_bytes: positiveSizeBytes.default(CONFIG_DEFAULTS.server.maxRequestBodyBytes),
    max_header_bytes: positiveSizeBytes.default(CONFIG_DEFAULTS.server.maxHeaderBytes),
    header_timeout: positiveDurationMs.default(CONFIG_DEFAULTS.server.headerTimeoutMs),
    request_timeout: positiveDurationMs.default(CONFIG_DEFAULTS.server.requestTimeoutMs),
    drain_timeout: nonNegativeDurationMs.default(CONFIG_DEFAULTS.server.drainTimeoutMs),
    api_keys: z.array(secretSchema(env), { error: 'must be an array of keys (literal or "env:VAR")' }).default([]),
  }).transform((server) => ({
    listen: server.listen,
    maxRequestBodyBytes: server.max_request_body_bytes,
    maxHeaderBytes: server.max_header_bytes,
    headerTimeoutMs: server.header_timeout,
    requestTimeoutMs: server.request_timeout,
    drainTimeoutMs: server.drain_timeout,
    apiKeys: server.api_keys,
  }));
}

function adminSchema(env: EnvVars) {
  return table({
    listen: z.string().pipe(parsedBy(parseListenAddress)).optional(),
    token: secretSchema(env).optional(),
  }).transform((admin) => ({ listen: admin.listen, token: admin.token }));
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
  totalTimeoutMs: upstream.total_timeout,
  maxHeldBodyBytes: upstream.max_held_body_bytes,
  maxHeldBytesTotal: upstream.max_held_bytes_total,
  ejectAfterFailures: upstream.eject_after_failures,
  ejectForMs: upstream.eject_for,
  maxConnections: upstream.max_connections,
  connectionWaitMs: upstream.connection_wait,
}));

const loadSignalsSchema = table({
  interval: positiveDurationMs.default(CONFIG_DEFAULTS.load.intervalMs),
  timeout: positiveDurationMs.default(CONFIG_DEFAULTS.load.timeoutMs),
  max_body_bytes: positiveSizeBytes.default(CONFIG_DEFAULTS.load.maxBodyBytes),
  stale_after: positiveDurationMs.default(CONFIG_DEFAULTS.load.staleAfterMs),
}).transform((load) => ({ intervalMs: load.interval, timeoutMs: load.timeout, maxBodyBytes: load.max_body_bytes, staleAfterMs: load.stale_after }));

/** A number > 0 and at most `max`. */
const positiveUpTo = (max: number) =>
  z.number({ error: 'must be a number greater than 0' }).positive({ error: 'must be a number greater than 0' }).max(max, { error: `must be at most ${max}` });
/** A number from `min` to `max` (no upper bound stated when `max` is Number.MAX_VALUE). */
const numberIn = (min: number, max: number) => {
  const error = max === Number.MAX_VALUE ? `must be a number of at least ${min}` : `must be a number from ${min} to ${max}`;
  return z.number({ error }).min(min, { error }).max(max, { error });
};

const policyName = z.enum(POLICY_NAMES, { error: `must be one of: ${POLICY_NAMES.join(', ')}` });

const routingSchema = table({
  policy: policyName.default(CONFIG_DEFAULTS.routing.policy),
  affinity_header: z
    .string({ error: 'must be a header name' })
    .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, { error: 'must be a header name, e.g. "x-session-id"' })
    .transform((header) => header.toLowerCase())
    .default(CONFIG_DEFAULTS.routing.affinityHeader),
  affinity_prefix_chars: wholeAtLeastOne.default(CONFIG_DEFAULTS.routing.affinityPrefixChars),
  affinity_epsilon: positiveUpTo(100).default(CONFIG_DEFAULTS.routing.affinityEpsilon),
  cache_threshold: numberIn(0, 1).default(CONFIG_DEFAULTS.routing.cacheThreshold),
  cache_balance_abs: z.int({ error: 'must be a whole number of at least 0' }).min(0, { error: 'must be a whole number of at least 0' }).default(CONFIG_DEFAULTS.routing.cacheBalanceAbs),
  cache_balance_rel: numberIn(1, Number.MAX_VALUE).default(CONFIG_DEFAULTS.routing.cacheBalanceRel),
  cache_prompt_chars: wholeAtLeastOne.default(CONFIG_DEFAULTS.routing.cachePromptChars),
  cache_max_tree_chars: wholeAtLeastOne.default(CONFIG_DEFAULTS.routing.cacheMaxTreeChars),
  queue_timeout: positiveDurationMs.default(CONFIG_DEFAULTS.routing.queueTimeoutMs),
  max_queue: z
    .int({ error: 'must be a whole number of at least 0' })
    .min(0, { error: 'must be a whole number of at least 0' })
    .default(CONFIG_DEFAULTS.routing.maxQueue),
  load_on_demand: z.boolean({ error: 'must be true or false' }).default(CONFIG_DEFAULTS.routing.loadOnDemand),
  completion_reserve: z
    .int({ error: 'must be a whole number of tokens, at least 1' })
    .min(1, { error: 'must be a whole number of tokens, at least 1' })
    .default(CONFIG_DEFAULTS.routing.completionReserveTokens),
  tokenize_timeout: positiveDurationMs.default(CONFIG_DEFAULTS.routing.tokenizeTimeoutMs),
  swap_after: nonNegativeDurationMs.default(CONFIG_DEFAULTS.routing.swapAfterMs),
  load_timeout: positiveDurationMs.default(CONFIG_DEFAULTS.routing.loadTimeoutMs),
}).transform((routing) => ({
  policy: routing.policy,
  affinityHeader: routing.affinity_header,
  affinityPrefixChars: routing.affinity_prefix_chars,
  affinityEpsilon: routing.affinity_epsilon,
  cacheThreshold: routing.cache_threshold,
  cacheBalanceAbs: routing.cache_balance_abs,
  cacheBalanceRel: routing.cache_balance_rel,
  cachePromptChars: routing.cache_prompt_chars,
  cacheMaxTreeChars: routing.cache_max_tree_chars,
  queueTimeoutMs: routing.queue_timeout,
  maxQueue: routing.max_queue,
  loadOnDemand: routing.load_on_demand,
  completionReserveTokens: routing.completion_reserve,
  tokenizeTimeoutMs: routing.tokenize_timeout,
  swapAfterMs: routing.swap_after,
  loadTimeoutMs: routing.load_timeout,
}));

const modelSchema = table({
  name,
  group: name.optional(),
  aliases: z.array(name, { error: 'must be an array of strings' }).default([]),
  policy: policyName.optional(),
}).transform((model): ModelSpec => ({ name: model.name, group: model.group, aliases: model.aliases, policy: model.policy }));

const modelsSchema = table({
  default: name.optional(),
  available: z.array(modelSchema, { error: 'must be an array of tables, written [[models.available]]' }).default([]),
})
  .superRefine((models, ctx) => {
    reportClashes(ctx, findModelNameClashes(models.available), ['available']);
    if (models.default !== undefined && !isDeclaredModel(models.default, models.available)) {
      ctx.addIssue({
        code: 'custom',
        path: ['default'],
        message: `"${models.default}" is not the name or alias of any [[models.available]] entry`,
      });
    }
  })
  .transform((models) => ({ default: models.default, available: models.available }));

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
    models: z
      .array(name, { error: 'must be an array of model ids or patterns, like ["llama-*"]' })
      .min(1, { error: 'must list at least one model id or pattern; leave it out to allow any model' })
      .optional(),
  }).transform(
    (node): NodeSpec => ({
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
    }),
  );

  return z
    .array(nodeSchema, { error: 'must be an array of tables, written [[nodes]]' })
    .min(1, { error: 'at least one [[nodes]] entry is required' })
    .superRefine((nodes, ctx) => reportClashes(ctx, findNodeNameClashes(nodes)));
}

/** The whole file. `env` resolves `api_key = "env:VAR"`; it is a parameter so loading stays pure. */
export function gatewayConfigSchema(env: EnvVars): z.ZodType<GatewayConfig> {
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
  }).superRefine((config, ctx) => {
    reportClashes(ctx, findUnservedModelGroups(config.models.available, config.nodes), ['models', 'available']);
    const admin = config.admin.listen;
    const main = config.server.listen;
    if (admin !== undefined && admin.port !== 0 && admin.port === main.port && admin.host === main.host) {
      ctx.addIssue({ code: 'custom', path: ['admin', 'listen'], message: 'must differ from server.listen (or leave it out to serve admin on the main listener)' });
    }
  });
}
