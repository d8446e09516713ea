// Public surface of per-node model discovery; other folders import only from here.

export type { DiscoveredModel } from './discovered-model.ts';
export { parseModelList, type ParseOutcome } from './parse-model-list.ts';
export {
  allowsModel,
  configuredModelWarnings,
  describeTransition,
  initialDiscoveryState,
  nextDiscoveryState,
  restrictDiscovery,
  type DiscoveryPhase,
  type DiscoveryPolicy,
  type DiscoveryResult,
  type DiscoveryState,
  type DiscoveryTransition,
  type DiscoveryTransitionMessage,
  type ModelAdmission,
} from './discovery-state.ts';
export {
  changedDrops,
  limitListing,
  type LimitedListing,
  type ListingDrop,
  type ListingLimit,
  type ListingRules,
} from './limit-listing.ts';
export { sampleIds, cutTo } from './id-sample.ts';
export { carryProgress, keepNewerPushes, modelsAfterEvent, type PushOutcome } from './model-event.ts';
export {
  MODEL_EVENT_LIMITS,
  ModelEventStream,
  type ModelEventLimits,
  type ModelEventStreamOptions,
  type StopReason,
  type StreamState,
  type StreamStop,
} from './model-event-stream.ts';
export { SseFrames, type FrameSplit } from './sse-frames.ts';
export { isAllowedModel, matchesGlob } from './model-glob.ts';
export { fetchModelList, type FetchModelListOptions } from './fetch-model-list.ts';
export { Discoverer, type DiscovererOptions, type FetchModels } from './discoverer.ts';
export { ListingCache, LISTING_CACHE_MAX_BYTES } from './listing-cache.ts';
