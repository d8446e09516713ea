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
export { formatProblems, loadConfig, loadConfigFile } from './load.ts';
export { diffConfig, diffNodes, type ConfigChange, type NodeChange, type NodePair } from './diff.ts';
export { isSameAllowList, nodeContinuity, type NodeContinuity } from './node-identity.ts';
export { formatDurationMs, parseDurationMs } from './duration.ts';
export { formatSizeBytes, parseSizeBytes } from './size.ts';
export { formatListenAddress, parseListenAddress } from './listen-address.ts';
export { nodePathPrefix, normalizeNodeUrl } from './node-url.ts';
export type { MeshConfig, MeshSitePin, MeshStaticModel } from './types.ts';
export type { ClusterConfig } from './types.ts';
export { DEFAULT_TENANT, defaultTenantSpec, TENANT_PRIORITIES, type TenantPriority, type TenantSpec } from './tenant-types.ts';
export type { SecretFileReader } from './client-keys.ts';
export { isSiteId } from './mesh-schema.ts';
export { parseOrigin, type CorsOrigins } from './cors-origins.ts';
export { parsePublicKey, ED25519_PUBLIC_KEY_BYTES } from './public-key.ts';
export { MESH_OPEN_TO_CLIENTS, meshOpenToClients } from './mesh-exposure.ts';
export { LOG_DEFAULTS, type LogConfig, type RequestLogTarget } from './log-schema.ts';
export { TRACING_DEFAULTS, type TracingConfig } from './tracing-schema.ts';
