export { type ModelContext, type NodeCapacity, type ServerRole, NO_CAPACITY, rememberContexts } from './node-capacity.ts';
export { parseLlamaProps, parseOllamaPs, type PropsReading } from './parse-capacity.ts';
export {
  type CapacityView,
  type Residency,
  residencyOf,
  ctxFor,
  lastKnownCtx,
  slotsFor,
  budgetFor,
  guaranteedCtx,
  isLlamaLike,
} from './model-fit.ts';
export { fetchCapacity, routerPropsPaths, type FetchCapacityOptions } from './fetch-capacity.ts';
export { LeaseTable, admits, type CapacityLease, type Usage, type Limits, type Refusal } from './lease-table.ts';
export { withLearnedContexts, LEARNED_CONTEXT_TTL_MS, type LearnedContexts } from './learned-contexts.ts';
