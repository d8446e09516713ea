export {
  route,
  filterCandidates,
  routeSummary,
  MAX_SUMMARY_ENTRIES,
  RouteIndex,
  ROUTE_INDEX_MAX_ENTRIES,
  type RoutingDecision,
  type CandidateScore,
  type ExcludedNode,
  type RouteSummary,
} from './route.ts';
export {
  type QueueTenant,
  type RouteRequest,
  neededTokens,
  minNeededTokens,
  reservedTokens,
  NO_TRIED_NODES,
  anyNodeResolves,
  servedModelName,
  type NamedNode,
  routeRequestFor,
  sessionFeature,
  sessionKeyParts,
  type RequestFacts,
  type RoutingSettings,
} from './route-request.ts';
export { classifyUnroutable, largestContext, mightFitLater, type UnroutableKind } from './unroutable.ts';
export { capacityVerdict } from './filters/has-capacity.ts';
export { type Exclusion, type ExclusionCode, countByCode, ExclusionCounter, nodesWorthRefreshing } from './exclusion.ts';
export { type Filter, type FilterResult, predicateFilter } from './filter.ts';
export { defaultFilters } from './filters/index.ts';
export { fitContext, mayTruncateAt } from './filters/fits-context.ts';
export { leastInFlight, pickLeastInFlight, pickLowest } from './policies/least-in-flight.ts';
export {
  REQUEST_FEATURES,
  type FeatureReaders,
  type PolicyChoice,
  type PolicyContext,
  type RequestFeature,
  type RequestFeatures,
  type SelectionPolicy,
} from './policies/selection-policy.ts';
export {
  createPolicy,
  policyPerRequest,
  POLICIES,
  requestFeaturesFor,
  type PolicyEntry,
  type PolicyFactory,
  type PolicySet,
} from './policies/index.ts';
export { cacheAware, type CacheAwarePolicy, type CacheAwareSettings, type PrefixHitFigures } from './policies/cache-aware.ts';
export { PrefixTree } from './policies/prefix-tree.ts';
export { pickWeighted } from './policies/weighted.ts';
export { affinity, loadBound, rendezvous, specHasher } from './policies/affinity.ts';
export {
  decideSession,
  keepingSessions,
  learnResponse,
  rememberedNode,
  sessionTableKeys,
  tenantOf,
  SESSION_READS,
  whyNotCandidate,
  type SessionDecision,
} from './policies/sessions.ts';
export {
  SessionTable,
  type SessionShare,
  sessionHash,
  sessionSite,
  siteSessionTarget,
  SESSION_TABLE_MAX_ENTRIES,
} from './policies/session-table.ts';
export { CONVERSATION_RETENTION_MS, conversationOwnerId } from './policies/owned-ids.ts';
export { siteSessionVerdict, type SiteSessionVerdict } from './remote/site-session.ts';
export { fnv1a32, mix32 } from './policies/hash.ts';
export { leastLoaded, loadScore, WAITING_WEIGHT, type LoadScore } from './policies/least-loaded.ts';
export { wakeCandidates, wakeTarget } from './wake-candidates.ts';
export { judgeModel, unknownVerdict, MAX_SUGGESTIONS, type ModelVerdict, type ModelVerdictInput } from './unknown-model.ts';
export { closestNames, coreName, editDistance } from './closest-names.ts';
export {
  routerRoom,
  routerRoomVerdict,
  modelLimit,
  chooseVictim,
  type RouterSwitchView,
  type RouterSwitchLookup,
  type PendingSwitch,
  type VictimChoice,
} from './filters/router-room.ts';
export {
  chooseSite,
  inSiteScope,
  knownRemoteModels,
  siteExclusion,
  type SiteChoice,
  type SiteRequest,
} from './remote/choose-site.ts';
export {
  SiteReachability,
  markFailed,
  markReached,
  unreachableAt,
  DEFAULT_SITE_BACKOFF,
  type BackoffPolicy,
  type Reachability,
  type ReachabilityChange,
} from './remote/reachability.ts';
export type { RemoteModel, RemoteSiteView, SiteExclusion, SiteExclusionCode } from './remote/remote-site.ts';
export { REMEMBERED_MS } from './remote/remote-site.ts';
export {
  alternativeFilters,
  hasAlternativeIn,
  routerRoomsOf,
  switchViewOf,
  withRouterRoom,
  type RouterRoom,
} from './pipeline.ts';

/** Which endpoints a node serves (its kind's set or `[[nodes]] endpoints`): the kinds' knowledge, for admin views. */
export { servedEndpoints } from '#src/kinds/index.ts';
export { endpointLack, judgedKind, modelSpeaks, nodeEndpoints } from './node-endpoints.ts';
