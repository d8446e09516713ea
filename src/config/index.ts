// The config folder's public surface; other folders import from here only.
export type {
  ConfigProblem,
  DiscoveryConfig,
  GatewayConfig,
  HealthConfig,
  ListenAddress,
  LoadResult,
  ModelSpec,
  DesiredModelState,
  ModelsConfig,
  NodeKind,
  NodeSpec,
  NodeSourceSpec,
  DnsNodeSourceSpec,
  KubernetesNodeSourceSpec,
  DnsQuery,
  PolicyName,
  ServerConfig,
  UpstreamConfig,
} from './types.ts';
export { NODE_KINDS, NODE_SOURCE_KINDS, POLICY_NAMES } from './types.ts';
export { KUBERNETES_SOURCE_DEFAULTS, NODE_SOURCE_DEFAULTS } from './node-sources-schema.ts';
export {
  INFERENCE_ENDPOINTS,
  OLLAMA_NATIVE_ENDPOINTS,
  OPENAI_ENDPOINTS,
  RERANK_ENDPOINTS,
  SCORE_ENDPOINTS,
  MULTIPART_ENDPOINTS,
  answersMedia,
  countsOnly,
  COUNTED_AS,
  isAnthropicPath,
  isOllamaPath,
  isRerankOrScoreEndpoint,
  isInferenceEndpoint,
  takesMultipart,
  ENDPOINT_TRAITS,
  TRAITS_BY_PATH,
  type EndpointTraits,
  type InferenceEndpoint,
} from './endpoints.ts';
export { CONTROL_PATH, RESPONSES_PREFIX, responseIdOf } from './owned-routes.ts';
export type { EnvVars } from './api-key.ts';
export { CONFIG_DEFAULTS, type ConfigDefaults } from './defaults.ts';
export { configLoader, formatProblems, readKeyFile, type LoadConfig, type LoadConfigFile } from './load.ts';
export { restartOnlyChecker, type RestartOnlyChanges } from './restart-only.ts';
export type { AnyConfigTable, ConfigTable, ConfigWarning, SecretFileReader, TableSecrets } from './config-table.ts';
export { diffConfig, diffNodes, type ConfigChange, type NodeChange, type NodePair } from './diff.ts';
export { isSameAllowList, nodeContinuity, type NodeContinuity } from './node-identity.ts';
export { formatDurationMs, parseDurationMs } from './duration.ts';
export { formatSizeBytes, parseSizeBytes } from './size.ts';
export { formatListenAddress, parseListenAddress } from './listen-address.ts';
export { nodePathPrefix, normalizeNodeUrl } from './node-url.ts';
export { parseOrigin, type CorsOrigins } from './cors-origins.ts';
