// Pure: what one node's model listing means for routing, and how each fetch result moves it.
//
// Phases:
//   untried     no listing yet (and fewer than failThreshold failures): every model may pass,
//               so a node that has not answered yet is not a black hole for its first requests.
//   known       the last listing was non-empty: exactly the listed ids pass.
//   known_empty two listings in a row were empty: nothing passes. One empty listing is not
//               enough, because routers and servers briefly list nothing while (re)loading.
//   degraded    a fetch failed after a listing: the last-known-good ids still pass.
//   expired     failThreshold fetches in a row failed: nothing passes until a listing succeeds.
// There is no wall-clock deadline: staleness is counted in failed fetches, so a paused gateway
// (or a slow interval) never expires a node that answers every fetch.

import type { DiscoveredModel } from './discovered-model.ts';
import type { ListingDrop } from './limit-listing.ts';
import { isAllowedModel } from './model-glob.ts';
import { carryProgress } from './model-event.ts';

export type DiscoveryPhase = 'untried' | 'known' | 'known_empty' | 'degraded' | 'expired';

export interface DiscoveryState {
  readonly phase: DiscoveryPhase;
  /** Last-known-good listing; a failure never clears it, only a successful listing replaces it. */
  readonly models: readonly DiscoveredModel[];
  /** Consecutive failed fetches. */
  readonly fails: number;
  /** Consecutive successful but empty listings. */
  readonly empties: number;
  /** Error of the latest failed fetch; cleared by a successful one. */
  readonly lastError: string | undefined;
  readonly lastSuccessAt: number | undefined;
  /** What the limits left out of the last successful listing; kept through failures. */
  readonly dropped: readonly ListingDrop[];
  /** When `phase` last changed (epoch ms). */
  readonly changedAt: number;
}

export type DiscoveryResult =
  | {
      readonly ok: true;
      readonly models: readonly DiscoveredModel[];
      readonly dropped?: readonly ListingDrop[];
      /**
       * From the node's pushed model state (model-event.ts), not a listing: it changes only the models
       * of a node with a listing (known or degraded), never the phase, the failure count or the
       * listing's time, so the poll stays the check.
       */
      readonly pushed?: true;
    }
  | { readonly ok: false; readonly reason: 'error' | 'parse_error' | 'timeout'; readonly error: string };

export interface DiscoveryPolicy {
  /** Consecutive failed fetches after which the node's listing expires (at least 1). */
  readonly failThreshold: number;
}

export type ModelAdmission =
  { readonly ok: true } | { readonly ok: false; readonly reason: 'not_allowed' | 'missing' | 'empty' | 'expired' };

/** Empty listings in a row that make a node known_empty. */
const EMPTIES_TO_KNOWN_EMPTY = 2;

export function initialDiscoveryState(now: number): DiscoveryState {
  return {
    phase: 'untried',
    models: [],
    fails: 0,
    empties: 0,
    lastError: undefined,
    lastSuccessAt: undefined,
    dropped: [],
    changedAt: now,
  };
}

export function nextDiscoveryState(
  prev: DiscoveryState,
  result: DiscoveryResult,
  now: number,
  policy: DiscoveryPolicy,
): DiscoveryState {
  if (!result.ok) {
    const fails = prev.fails + 1;
    const phase: DiscoveryPhase =
      fails >= Math.max(1, policy.failThreshold)
        ? 'expired'
        : prev.phase === 'known' || prev.phase === 'known_empty'
          ? 'degraded'
          : prev.phase;
    return withPhase(prev, phase, now, { fails, empties: 0, lastError: result.error });
  }
  if (result.pushed === true) {
    return prev.phase === 'known' || prev.phase === 'degraded'
      ? withPhase(prev, prev.phase, now, { models: result.models })
      : prev;
  }
  const success = { fails: 0, lastError: undefined, lastSuccessAt: now, dropped: result.dropped ?? [] };
  if (result.models.length > 0) {
    return withPhase(prev, 'known', now, { ...success, empties: 0, models: carryProgress(prev.models, result.models) });
  }
  const empties = prev.empties + 1;
  if (empties < EMPTIES_TO_KNOWN_EMPTY) return withPhase(prev, prev.phase, now, { ...success, empties });
  return withPhase(prev, 'known_empty', now, { ...success, empties, models: [] });
}

/**
 * Whether this node's listing admits a request for `modelId` (exact id; aliases are not implied).
 * The node's allow-list is checked first, so an untried node is no way round it.
 */
export function allowsModel(
  state: DiscoveryState,
  modelId: string,
  /** The listing's ids, when the caller keeps them indexed (routing over large fleets). */
  index?: ReadonlyMap<string, DiscoveredModel>,
  /** The node's allow-list (`[[nodes]] models`); absent = any model. */
  allowList?: readonly string[],
): ModelAdmission {
  if (!isAllowedModel(allowList, modelId)) return { ok: false, reason: 'not_allowed' };
  switch (state.phase) {
    case 'untried':
      return { ok: true };
    case 'known':
    case 'degraded': {
      const listed = index !== undefined ? index.has(modelId) : state.models.some((model) => model.id === modelId);
      return listed ? { ok: true } : { ok: false, reason: 'missing' };
    }
    case 'known_empty':
      return { ok: false, reason: 'empty' };
    case 'expired':
      return { ok: false, reason: 'expired' };
  }
}

/**
 * The state without the listed ids `allowList` refuses (a reload narrowed a node's allow-list), so
 * they stop being routed at once instead of at the next listing.
 */
export function restrictDiscovery(state: DiscoveryState, allowList: readonly string[] | undefined, now: number): DiscoveryState {
  const models = state.models.filter((model) => isAllowedModel(allowList, model.id));
  if (models.length === state.models.length) return state;
  const phase = state.phase === 'known' && models.length === 0 ? 'known_empty' : state.phase;
  return withPhase(state, phase, now, { models });
}

function withPhase(
  prev: DiscoveryState,
  phase: DiscoveryPhase,
  now: number,
  changes: Partial<Omit<DiscoveryState, 'phase' | 'changedAt'>>,
): DiscoveryState {
  return { ...prev, ...changes, phase, changedAt: phase === prev.phase ? prev.changedAt : now };
}

export type DiscoveryTransitionMessage =
  | 'models discovered'
  | 'node reports no models'
  | 'model discovery failed'
  | 'model discovery expired'
  | 'model discovery recovered'
  | 'node model list changed';

/** One log-worthy fact about a state change; ids are sorted so log lines compare across runs. */
export interface DiscoveryTransition {
  readonly message: DiscoveryTransitionMessage;
  readonly level: 'info' | 'warn';
  readonly added?: string[];
  readonly removed?: string[];
  readonly error?: string;
}

/**
 * At most one event per state change, so a flapping node logs once per change and never once
 * per poll: repeated failures and unchanged listings describe nothing.
 */
export function describeTransition(prev: DiscoveryState, next: DiscoveryState): DiscoveryTransition | undefined {
  if (next.phase === 'known_empty') {
    return prev.phase === 'known_empty' ? undefined : { message: 'node reports no models', level: 'warn' };
  }
  if (next.phase === 'known') return describeListing(prev, next);
  if (next.phase === 'expired') {
    return prev.phase === 'expired' ? undefined : withError({ message: 'model discovery expired', level: 'warn' }, next);
  }
  if (prev.fails === 0 && next.fails === 1) {
    return withError({ message: 'model discovery failed', level: 'warn' }, next);
  }
  return undefined;
}

/**
 * The configured ids (those this node's group should serve) missing from its new listing. Empty
 * unless the id set changed, so each warning is raised once per (node, model) per list change.
 */
export function configuredModelWarnings(
  prevModels: readonly DiscoveredModel[],
  nextModels: readonly DiscoveredModel[],
  expectedIds: readonly string[],
): string[] {
  const { added, removed } = diffIds(prevModels, nextModels);
  if (added.length === 0 && removed.length === 0) return [];
  const served = new Set(nextModels.map((model) => model.id));
  return [...new Set(expectedIds)].filter((id) => !served.has(id));
}

function describeListing(prev: DiscoveryState, next: DiscoveryState): DiscoveryTransition | undefined {
  const { added, removed } = diffIds(prev.models, next.models);
  const changed = added.length > 0 || removed.length > 0;
  switch (prev.phase) {
    case 'untried':
    case 'known_empty':
      return { message: 'models discovered', level: 'info', added };
    case 'degraded':
    case 'expired':
      return changed
        ? { message: 'model discovery recovered', level: 'info', added, removed }
        : { message: 'model discovery recovered', level: 'info' };
    case 'known':
      return changed ? { message: 'node model list changed', level: 'info', added, removed } : undefined;
  }
}

function diffIds(
  prevModels: readonly DiscoveredModel[],
  nextModels: readonly DiscoveredModel[],
): { added: string[]; removed: string[] } {
  // The steady case (every poll of an unchanged node): the same ids in the same order, no sets built.
  if (prevModels === nextModels || sameIds(prevModels, nextModels)) return { added: [], removed: [] };
  const prevIds = new Set(prevModels.map((model) => model.id));
  const nextIds = new Set(nextModels.map((model) => model.id));
  return {
    added: [...nextIds].filter((id) => !prevIds.has(id)).sort(),
    removed: [...prevIds].filter((id) => !nextIds.has(id)).sort(),
  };
}

function sameIds(a: readonly DiscoveredModel[], b: readonly DiscoveredModel[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) if (a[i]?.id !== b[i]?.id) return false;
  return true;
}

function withError(transition: DiscoveryTransition, next: DiscoveryState): DiscoveryTransition {
  return next.lastError === undefined ? transition : { ...transition, error: next.lastError };
}
