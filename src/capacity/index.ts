export {
  type ModelContext,
  type NodeCapacity,
  type RouterLimits,
  type ServerRole,
  NO_CAPACITY,
  rememberContexts,
} from './node-capacity.ts';
export { sameCapacity } from './same-capacity.ts';
export {
  type CapacityView,
  type Residency,
  residencyOf,
  ctxFor,
  lastKnownCtx,
  slotsFor,
  budgetFor,
  guaranteedCtx,
  sharesKvPool,
  kvModeFor,
  type KvModeFigure,
} from './model-fit.ts';
export {
  fetchCapacity,
  loadedIdsOf,
  PROPS_CONCURRENCY,
  type CapacityReading,
  type FetchCapacityOptions,
} from './fetch-capacity.ts';
export { afterRound, idsToAsk, FIRST_ROUND, type RouterRound } from './capacity-round.ts';
export { CapacityPoller, FACTS_EVERY_POLLS, factsDue, type CapacityPollOptions } from './capacity-poller.ts';
export { fetchServerFacts, type FetchFactsOptions } from './fetch-server-facts.ts';
export { admits, type Usage, type Limits, type Refusal } from './model-fit.ts';
export { withLearnedContexts, LEARNED_CONTEXT_TTL_MS, type LearnedContexts } from './learned-contexts.ts';
export {
  LearnedFigures,
  type LearningRule,
  MAX_BYTES_PER_TOKEN,
  fleetRatio,
  observeRatio,
  MAX_LEARNED_RATIOS,
  TOKEN_RATIO_LEARNING,
  ratioChanged,
  usableRatio,
  widestRatio,
  TOKEN_RATIO_MIN_PROMPT_BYTES,
  TOKEN_RATIO_MIN_SAMPLES,
  TOKEN_RATIO_TTL_MS,
  type RatioSample,
  type RatioView,
  type TokenRatio,
} from './learned-figures.ts';
export {
  DECODE_MIN_SAMPLES,
  DECODE_MIN_TOKENS,
  DECODE_MIN_MS,
  DECODE_RATE_TTL_MS,
  decodeChanged,
  MAX_LEARNED_DECODES,
  DECODE_RATE_LEARNING,
  observeDecode,
  tokensPerSecond,
  usableDecode,
  type DecodeRate,
  type DecodeSample,
} from './learned-figures.ts';
