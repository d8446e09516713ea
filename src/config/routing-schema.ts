// The [routing] and [load] tables: how a node is chosen and how long requests wait, and the load
// signals scraped from each node's own metrics.
import { z } from 'zod';
import { CONFIG_DEFAULTS } from './defaults.ts';
import {
  nonNegativeDurationMs,
  numberIn,
  positiveDurationMs,
  positiveSizeBytes,
  positiveUpTo,
  table,
  wholeAtLeastOne,
} from './schema-parts.ts';
import { POLICY_NAMES } from './types.ts';

export const loadSignalsSchema = table({
  interval: positiveDurationMs.default(CONFIG_DEFAULTS.load.intervalMs),
  timeout: positiveDurationMs.default(CONFIG_DEFAULTS.load.timeoutMs),
  max_body_bytes: positiveSizeBytes.default(CONFIG_DEFAULTS.load.maxBodyBytes),
  stale_after: positiveDurationMs.default(CONFIG_DEFAULTS.load.staleAfterMs),
}).transform((load) => ({
  intervalMs: load.interval,
  timeoutMs: load.timeout,
  maxBodyBytes: load.max_body_bytes,
  staleAfterMs: load.stale_after,
}));

export const policyName = z.enum(POLICY_NAMES, { error: `must be one of: ${POLICY_NAMES.join(', ')}` });

export const routingSchema = table({
  policy: policyName.default(CONFIG_DEFAULTS.routing.policy),
  affinity_header: z
    .string({ error: 'must be a header name' })
    .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, { error: 'must be a header name, e.g. "x-session-id"' })
    .transform((header) => header.toLowerCase())
    .default(CONFIG_DEFAULTS.routing.affinityHeader),
  affinity_prefix_chars: wholeAtLeastOne.default(CONFIG_DEFAULTS.routing.affinityPrefixChars),
  affinity_epsilon: positiveUpTo(100).default(CONFIG_DEFAULTS.routing.affinityEpsilon),
  sessions: z.boolean({ error: 'must be true or false' }).default(CONFIG_DEFAULTS.routing.sessions),
  session_ttl: positiveDurationMs.default(CONFIG_DEFAULTS.routing.sessionTtlMs),
  cache_threshold: numberIn(0, 1).default(CONFIG_DEFAULTS.routing.cacheThreshold),
  cache_balance_abs: z
    .int({ error: 'must be a whole number of at least 0' })
    .min(0, { error: 'must be a whole number of at least 0' })
    .default(CONFIG_DEFAULTS.routing.cacheBalanceAbs),
  cache_balance_rel: numberIn(1, Number.MAX_VALUE).default(CONFIG_DEFAULTS.routing.cacheBalanceRel),
  cache_prompt_chars: wholeAtLeastOne.default(CONFIG_DEFAULTS.routing.cachePromptChars),
  cache_max_tree_chars: wholeAtLeastOne.default(CONFIG_DEFAULTS.routing.cacheMaxTreeChars),
  queue_timeout: positiveDurationMs.default(CONFIG_DEFAULTS.routing.queueTimeoutMs),
  max_queue: z
    .int({ error: 'must be a whole number of at least 0' })
    .min(0, { error: 'must be a whole number of at least 0' })
    .default(CONFIG_DEFAULTS.routing.maxQueue),
  queue_aging: nonNegativeDurationMs.default(CONFIG_DEFAULTS.routing.queueAgingMs),
  load_on_demand: z.boolean({ error: 'must be true or false' }).default(CONFIG_DEFAULTS.routing.loadOnDemand),
  translate: z.boolean({ error: 'must be true or false' }).default(CONFIG_DEFAULTS.routing.translate),
  resumable_streams: z.boolean({ error: 'must be true or false' }).default(CONFIG_DEFAULTS.routing.resumableStreams),
  completion_reserve: z
    .int({ error: 'must be a whole number of tokens, at least 1' })
    .min(1, { error: 'must be a whole number of tokens, at least 1' })
    .default(CONFIG_DEFAULTS.routing.completionReserveTokens),
  tokenize_timeout: positiveDurationMs.default(CONFIG_DEFAULTS.routing.tokenizeTimeoutMs),
  swap_after: nonNegativeDurationMs.default(CONFIG_DEFAULTS.routing.swapAfterMs),
  load_timeout: positiveDurationMs.default(CONFIG_DEFAULTS.routing.loadTimeoutMs),
  router_queue: z
    .enum(['auto', 'gateway'], { error: 'must be "auto" (a router that queues itself does) or "gateway"' })
    .default(CONFIG_DEFAULTS.routing.routerQueue),
}).transform((routing) => ({
  policy: routing.policy,
  affinityHeader: routing.affinity_header,
  affinityPrefixChars: routing.affinity_prefix_chars,
  affinityEpsilon: routing.affinity_epsilon,
  sessions: routing.sessions,
  sessionTtlMs: routing.session_ttl,
  cacheThreshold: routing.cache_threshold,
  cacheBalanceAbs: routing.cache_balance_abs,
  cacheBalanceRel: routing.cache_balance_rel,
  cachePromptChars: routing.cache_prompt_chars,
  cacheMaxTreeChars: routing.cache_max_tree_chars,
  queueTimeoutMs: routing.queue_timeout,
  maxQueue: routing.max_queue,
  queueAgingMs: routing.queue_aging,
  loadOnDemand: routing.load_on_demand,
  translate: routing.translate,
  resumableStreams: routing.resumable_streams,
  completionReserveTokens: routing.completion_reserve,
  tokenizeTimeoutMs: routing.tokenize_timeout,
  swapAfterMs: routing.swap_after,
  loadTimeoutMs: routing.load_timeout,
  routerQueue: routing.router_queue,
}));
