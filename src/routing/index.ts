export { route, filterCandidates, type RoutingDecision } from './route.ts';
export { type RouteRequest, neededTokens, reservedTokens } from './route-request.ts';
export { classifyUnroutable, largestContext, mightFitLater, type UnroutableKind } from './unroutable.ts';
export { capacityVerdict } from './filters/has-capacity.ts';
export { type Exclusion, type ExclusionCode, countByCode, nodesWorthRefreshing } from './exclusion.ts';
export { type Filter, type FilterResult, predicateFilter } from './filter.ts';
export { defaultFilters } from './filters/index.ts';
export { leastInFlight, pickLeastInFlight, type SelectionPolicy } from './policies/least-in-flight.ts';
export { wakeCandidates, wakeTarget } from './wake-candidates.ts';
