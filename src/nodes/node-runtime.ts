// One node's record inside the registry (the only place it is written), and the frozen view
// projected from it. A view is plain data: it holds absolute deadlines, never a judgement of "now",
// so a cached view stays true however much time passes.

import type { NodeSpec } from '#src/config/types.ts';
import { initialDiscoveryState, type DiscoveredModel, type DiscoveryState } from '#src/discovery/index.ts';
import {
  DECODE_RATE_LEARNING,
  LearnedFigures,
  NO_CAPACITY,
  TOKEN_RATIO_LEARNING,
  type DecodeRate,
  type DecodeSample,
  type LearnedContexts,
  type ModelContext,
  type NodeCapacity,
  type RatioSample,
  type TokenRatio,
} from '#src/capacity/index.ts';
import { INITIAL_PASSIVE_STATE, type PassiveState } from './health/passive.ts';
import { initialHealthState, type HealthState } from './health/health-state.ts';
import type { NodeView, ViewFacts } from './node.ts';
import type { LoadReading } from './load/load-reading.ts';
import { frozenDiscovery } from './frozen-discovery.ts';
import { viewFacts } from './view-facts.ts';

export interface NodeRuntime {
  spec: NodeSpec;
  health: HealthState;
  discovery: DiscoveryState;
  capacity: NodeCapacity;
  knownContexts: Readonly<Record<string, ModelContext>>;
  passive: PassiveState;
  /** When a wake was last sent to this node (epoch ms). */
  lastWakeAt: number | undefined;
  /** Endpoints the node answered with a route-level 404, with what it said (cleared when its listing or kind changes). */
  lacking: Readonly<Record<string, string>>;
  /** Contexts the node itself stated when refusing a prompt, with when (epoch ms). */
  learned: LearnedContexts;
  /** Bytes per prompt token per model, as learned from every answer (capacity/learned-figures.ts), and as the view shows them. */
  readonly tokenRatios: LearnedFigures<TokenRatio, RatioSample>;
  /** How fast the node generates each model's tokens, as learned from every answer (capacity/learned-figures.ts). */
  readonly decodeRates: LearnedFigures<DecodeRate, DecodeSample>;
  inFlight: number;
  /** Index in the registry's active nodes (its views array); -1 once the node is retiring. */
  position: number;
  /** The node's own load figures from the load loop (not part of the view: they change every scrape). */
  load: LoadReading | undefined;
  /** This node's routing view, rebuilt only after one of its routing-relevant fields changed. */
  view: NodeView | undefined;
  /** The view facts last worked out, with what they were worked out from: reused by a rebuild that changed none of it. */
  facts: FactsBasis | undefined;
  /** When (monotonic ms) a pushed model event last changed each model: a listing asked before it does not undo it. */
  pushedAt: ReadonlyMap<string, number>;
}

/** What a view's facts depend on (view-facts.ts reads nothing else), by identity. */
interface FactsBasis {
  readonly spec: NodeSpec;
  readonly phase: DiscoveryState['phase'];
  readonly models: DiscoveryState['models'];
  readonly capacity: NodeCapacity;
  /** The listing indexed by id (from `models`), reused with the facts so the view's field stays the same object. */
  readonly modelsById: ReadonlyMap<string, DiscoveredModel>;
  readonly facts: ViewFacts;
}

/** A node the registry has learned nothing about yet (new, or a new server under a known name). */
export function freshRuntime(spec: NodeSpec, now: number): NodeRuntime {
  return {
    spec: Object.freeze({ ...spec }),
    health: Object.freeze(initialHealthState(now)),
    discovery: frozenDiscovery(initialDiscoveryState(now), undefined),
    capacity: NO_CAPACITY,
    knownContexts: {},
    passive: INITIAL_PASSIVE_STATE,
    lastWakeAt: undefined,
    learned: {},
    lacking: {},
    tokenRatios: new LearnedFigures(TOKEN_RATIO_LEARNING),
    decodeRates: new LearnedFigures(DECODE_RATE_LEARNING),
    inFlight: 0,
    position: -1,
    load: undefined,
    view: undefined,
    facts: undefined,
    pushedAt: NO_PUSHES,
  };
}

const NO_PUSHES: ReadonlyMap<string, number> = new Map();

export function viewOf(runtime: NodeRuntime): NodeView {
  const { spec, health, discovery, lastWakeAt, capacity, knownContexts } = runtime;
  // A rebuild for a learned figure, health or a wake keeps the facts and the listing's index (they
  // depend on none of those): a view that differs only in learned figures is recognisably so (sameBesidesLearned).
  let basis = runtime.facts;
  if (
    basis === undefined ||
    basis.spec !== spec ||
    basis.phase !== discovery.phase ||
    basis.models !== discovery.models ||
    basis.capacity !== capacity
  ) {
    const modelsById = new Map(discovery.models.map((m) => [m.id, m]));
    const facts = viewFacts({ spec, discovery, modelsById, capacity, knownContexts });
    basis = runtime.facts = { spec, phase: discovery.phase, models: discovery.models, capacity, modelsById, facts };
  }
  return Object.freeze({
    spec,
    health,
    discovery,
    modelsById: basis.modelsById,
    capacity,
    knownContexts,
    tokenRatios: runtime.tokenRatios.published,
    ...(Object.keys(runtime.decodeRates.published).length === 0 ? {} : { decodeRates: runtime.decodeRates.published }),
    ...(Object.keys(runtime.lacking).length === 0 ? {} : { lackingEndpoints: runtime.lacking }),
    ejectedUntil: runtime.passive.ejectedUntil,
    ...(runtime.position >= 0 ? { position: runtime.position } : {}),
    facts: basis.facts,
    wake: Object.freeze({
      lastSentAt: lastWakeAt,
      // Only an asleep node is "waking"; a status change rebuilds the view, so this stays true.
      wakingUntil: health.status === 'asleep' && lastWakeAt !== undefined ? lastWakeAt + spec.wakeTimeoutMs : undefined,
    }),
  });
}

/**
 * Numbers the new active set in order (the order of the views) and drops every view, since each
 * carries its position; nodes leaving the set lose theirs. Returns their in-flight counts by position.
 */
export function reposition(previous: Iterable<NodeRuntime>, active: Iterable<NodeRuntime>): number[] {
  for (const runtime of previous) runtime.position = -1;
  const counts: number[] = [];
  for (const runtime of active) {
    runtime.position = counts.length;
    counts.push(runtime.inFlight);
    runtime.view = undefined;
  }
  return counts;
}
