// proxy/'s public surface: other folders import proxy through this file only. The features' request
// halves (sites/ for [mesh], tenants/ for [tenants]) are not part of it: the request plane's feature
// list (plane/request-features.ts) imports them from their own folders.
export { handleInference } from './inference/inference-handler.ts';
export { NO_HOOKS, type InferenceDeps, type RequestHooks } from './inference/inference-deps.ts';
export {
  ActiveRequests,
  createHttpServer,
  listen,
  urlOf,
  sendJson,
  TableBuilder,
  mergeTables,
  type EndpointsInForce,
  type EndpointTable,
  type Handler,
} from './http/server.ts';
export { publicEndpoints, INFERENCE_PATHS, type PublicEndpointDeps } from './inference/public-endpoints.ts';
export { sameCorsOrigins } from './http/cors.ts';
export { fleetStatus, healthHttpStatus, type FleetStatus } from './inference/fleet-status.ts';
export { isLoopbackAddress, presentedKey, rotatingKeyCheck, unauthorized } from './http/auth.ts';
export { UpstreamPools, type PoolFigures } from './attempt/upstream-pools.ts';
export { HeldBytesBudget } from './attempt/held-answer.ts';
export type { ProxyEvents } from './request/proxy-events.ts';
export type { AttemptResult } from './attempt/attempt-result.ts';
export { sendError, errorBody } from './http/openai-error.ts';
export { ANTHROPIC_ERRORS, OPENAI_ERRORS, type ErrorDialect } from './http/error-dialect.ts';
export { resolveRequest, type ModelCatalog, type ResolvedRequest } from './request/request-model.ts';
export { readBody } from './http/read-body.ts';
export { buildCatalog } from './request/model-catalog.ts';
export { fleetModels } from './request/models-list.ts';
export { requestSettings, type RequestSettings } from './request/request-settings.ts';
export { sessionKeyOf, type SessionKey } from './request/affinity-key.ts';
export { siteLabel } from './failover/target.ts';
export { upstreamVerdict } from './failover/attempt-feedback.ts';
export { translationFor } from './translate/translation-choice.ts';
export {
  NO_GATES,
  OPEN_CALLER,
  type Caller,
  type FeatureRoute,
  type FeatureSource,
  type ForwardRefusal,
  type RequestFeature,
  type RequestGate,
  type ServeInference,
  type SourceAsk,
  type StartedRequest,
} from './feature/request-feature.ts';
export { chatBytesBounds, promptBounds, type PromptBounds } from './request/prompt-size.ts';
export {
  newRequestIds,
  whenFinished,
  type FinishHook,
  type RequestLabels,
  type RequestObserver,
} from './request/request-report.ts';
