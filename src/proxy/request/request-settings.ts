// Pure: the settings one request runs under, read once when it arrives. A reload swaps in a new
// object for later requests; a request in progress never sees two configs.

import type { GatewayConfig } from '#src/config/types.ts';
import type { RoutingSettings } from '#src/routing/index.ts';
import type { QueueSettings } from '#src/scheduler/index.ts';
import type { AffinitySettings } from './affinity-key.ts';
import { buildCatalog } from './model-catalog.ts';
import type { ModelCatalog } from './request-model.ts';

export interface RequestSettings extends RoutingSettings, QueueSettings, AffinitySettings {
  readonly catalog: ModelCatalog;
  readonly maxRequestBodyBytes: number;
  /** Retry-After for 503 answers: one health interval, at least a second. */
  readonly retryAfterSeconds: number;
  readonly tokenizeTimeoutMs: number;
  /** Bound on one whole upstream exchange (0 = none). */
  readonly totalTimeoutMs: number;
  /** `[upstream] first_token_timeout`: a streamed answer's first-token deadline (0 = none); a node may set its own. */
  readonly firstTokenTimeoutMs: number;
  /** Largest whole JSON answer held until it parses; past it, and past the shared budget, answers stream. */
  readonly maxHeldBodyBytes: number;
  /** `[log] bodies`: the prompt text kept for the request's line, at most this many bytes; undefined = never. */
  readonly logPromptBytes: number | undefined;
}

export function requestSettings(config: GatewayConfig): RequestSettings {
  const { routing, upstream } = config;
  return Object.freeze({
    catalog: buildCatalog(config.models),
    maxRequestBodyBytes: config.server.maxRequestBodyBytes,
    retryAfterSeconds: Math.max(1, Math.ceil(config.health.intervalMs / 1000)),
    loadOnDemand: routing.loadOnDemand,
    policy: routing.policy,
    affinityHeader: routing.affinityHeader,
    affinityPrefixChars: routing.affinityPrefixChars,
    sessions: routing.sessions,
    cachePromptChars: routing.cachePromptChars,
    completionReserveTokens: routing.completionReserveTokens,
    tokenizeTimeoutMs: routing.tokenizeTimeoutMs,
    queueTimeoutMs: routing.queueTimeoutMs,
    maxQueue: routing.maxQueue,
    queueAgingMs: routing.queueAgingMs,
    swapAfterMs: routing.swapAfterMs,
    loadTimeoutMs: routing.loadTimeoutMs,
    missWaitMs: config.discovery.missWaitMs,
    totalTimeoutMs: upstream.totalTimeoutMs,
    firstTokenTimeoutMs: upstream.firstTokenTimeoutMs,
    maxHeldBodyBytes: upstream.maxHeldBodyBytes,
    logPromptBytes: config.log?.bodies === true ? config.log.bodiesMaxBytes : undefined,
  });
}
