// Public surface of the server kinds; other folders import only from here.

export type {
  CapacityAnswer,
  CapacityDialect,
  Detection,
  KvFigures,
  KvPool,
  ListedEntry,
  KindDetector,
  ModelContext,
  PerModelDialect,
  ProbeAnswers,
  RefusalMeaning,
  RouterLimits,
  JsonKeyMatching,
  ServerKind,
  ServerRole,
  TokenizeDialect,
  TokenizeRequest,
} from './server-kind.ts';
export { serverKind, serverKinds } from './registry.ts';
export { jsonKeysOf, loosestJsonKeys } from './json-keys.ts';
export { refusalInAnyDialect } from './auto.ts';
export { entryHold, isKnownStatus, isLoadingEntry, isRunningEntry, progressText, type EntryHold } from './listing-entry.ts';
export { LLAMACPP_ROUTER_EVENTS, readRouterFrame, ROUTER_EVENTS_PATH } from './llamacpp-events.ts';
export type { ModelEvent, ModelEventReading, ModelEventsDialect, ModelProgress } from './model-event-shapes.ts';
export { LLAMA_KV_POOL } from './kv-pool.ts';
export type { LoadPaths } from './load-paths.ts';
export { aliasedName, exactName, ollamaFullName, ollamaName, type ListedName, type ListedNames } from './model-names.ts';
export { isLlamaLike, streamUsageFor, tokenizerFor } from './llama-like.ts';
export { ASKED_WITH_NULLS, type StreamUsage } from './stream-usage.ts';
export { truncatesSilently } from './truncation.ts';
export { readRefusal, firstMeaning, type RefusalDialect } from './refusal.ts';
export { parseLlamaProps, routerPropsPath, type PropsReading } from './llamacpp.ts';
export { parseOllamaPs } from './ollama.ts';
export { addLoadFigures, loadMetricsPath, readLoadFigures, type LoadDialect, type LoadFigures } from './load-metrics.ts';
export { kvModeFromArgs, routerArgsOf, type ServerKvMode } from './llamacpp-kv.ts';
export { routeMissing, servedEndpoints } from './endpoints.ts';
export { OLLAMA_API_VERSION, OLLAMA_LISTING_PATHS, OLLAMA_MANAGEMENT_ROUTES, OLLAMA_ROOT } from './ollama-api.ts';
export { LLAMACPP_ROUTER_OPS, OLLAMA_OPS } from './model-ops.ts';
export type { ModelAction, ModelOpAnswer, ModelOpRequest, ModelOps, ObservedModelState } from './model-op-shapes.ts';
export {
  factsPaths,
  kindOfNode,
  readFacts,
  sameFacts,
  versionDialect,
  type KnownKind,
  type ServerFacts,
  type VersionDialect,
} from './server-facts.ts';
export { firstVersion, predatesEndpoint, versionNumbers } from './endpoint-versions.ts';
export { routerQueueOf, type RouterQueueFact, type RouterQueueState } from './router-queue.ts';
