// What the rest of the gateway sees of a node: a frozen projection of the registry's state.

import type { NodeSpec } from '#src/config/types.ts';
import type { DiscoveredModel, DiscoveryState } from '#src/discovery/index.ts';
import type { DecodeRate, ModelContext, NodeCapacity, Residency, TokenRatio, Usage } from '#src/capacity/index.ts';
import type { StreamUsage } from '#src/kinds/index.ts';
import type { HealthState } from './health/health-state.ts';
import type { LoadReading } from './load/load-reading.ts';

export interface NodeView {
  readonly spec: NodeSpec;
  readonly health: HealthState;
  readonly discovery: DiscoveryState;
  /** The listing indexed by model id (built once per view, so routing never scans lists). */
  readonly modelsById: ReadonlyMap<string, DiscoveredModel>;
  /** Context and slots from the latest successful capacity poll (kept while the node is down). */
  readonly capacity: NodeCapacity;
  /** The last figures ever seen per model, for models that would be loaded on demand. */
  readonly knownContexts: Readonly<Record<string, ModelContext>>;
  /**
   * Endpoints the node answered with a route-level 404 (an older server), each with what it said;
   * kept until its listing or URL changes. Absent = none.
   */
  readonly lackingEndpoints?: Readonly<Record<string, string>>;
  /** Bytes per prompt token per model, learned from this node's answers (absent = none learned). */
  readonly tokenRatios?: Readonly<Record<string, TokenRatio>>;
  /** How fast this node generates each model's tokens, learned from its answers (absent = none learned). */
  readonly decodeRates?: Readonly<Record<string, DecodeRate>>;
  /**
   * End of the node's latest passive-health ejection (epoch ms), which may have passed: readers
   * compare it with their own `now` (`isEjected(view, now)`), so a view never goes stale with time.
   */
  readonly ejectedUntil: number | undefined;
  /** Wake state for nodes that sleep: when a wake was last sent, and until when it counts as under way. */
  readonly wake: NodeWake;
  /**
   * The node's index in its registry's routing views (set by the registry, which rebuilds every
   * view when the node set changes): where its live in-flight count sits in `inFlightByPosition`.
   */
  readonly position?: number;
  /**
   * What depends only on this node — its kind, URL, capacity role and listing — worked out once when
   * the view is built (view-facts.ts), so the request path reads fields instead of asking again.
   * Absent (a view built by hand, or one changed by a spread): readers ask the functions it comes from.
   */
  readonly facts?: ViewFacts;
}

/** A view's facts (see NodeView.facts): plain data, so a view still crosses to a worker as it is. */
export interface ViewFacts {
  /** The node may cut an overlong prompt silently instead of refusing it (kinds/truncation.ts). */
  readonly truncates: boolean;
  /** What its streams say of their usage unasked (kinds/llama-like.ts `streamUsageFor`). */
  readonly streamUsage: StreamUsage;
  /** The path of the node's URL, put before every endpoint sent to it (config/node-url.ts). */
  readonly pathPrefix: string;
  /** Per listed model: where it runs and the context a request gets there (capacity/model-fit.ts). */
  readonly models: ReadonlyMap<string, ListedModelFacts>;
}

export interface ListedModelFacts {
  /** `residencyOf(view, model)`. */
  readonly residency: Residency;
  /** `ctxFor(view, model)`: the per-request context limit, 0 when unknown. */
  readonly ctx: number;
}

export interface NodeWake {
  readonly lastSentAt: number | undefined;
  /**
   * While the node is asleep and a wake was sent: when that wake's window ends (epoch ms), which
   * may have passed. Compare with `isWaking(view, now)`.
   */
  readonly wakingUntil: number | undefined;
}

/** Whether a wake is under way for the node at `now` (it is asleep and the wake's window is open). */
export function isWaking(view: Pick<NodeView, 'wake'>, now: number): boolean {
  return view.wake.wakingUntil !== undefined && now < view.wake.wakingUntil;
}

/** What routing decides over: the active nodes and their live in-flight counts and leases. */
export interface RoutingSnapshot {
  readonly nodes: readonly NodeView[];
  /** When the snapshot was taken (epoch ms): the views' deadlines are compared with this. */
  readonly now: number;
  inFlight(nodeName: string): number;
  /**
   * The same live counts by view `position` (an array read instead of a lookup by name; routing at
   * 1,000 nodes reads it once per node per decision). Absent: use `inFlight`.
   */
  readonly inFlightByPosition?: ArrayLike<number>;
  /**
   * The changes to `inFlightByPosition`, live (a reader remembers `total` and reads the positions
   * changed since). Absent: a reader reads every count each time.
   */
  readonly inFlightChanges?: InFlightJournal;
  /** Nodes at the connection limit when the snapshot was taken; 0 lets routing skip the check. Absent: unknown. */
  readonly nodesAtConnectionLimit?: number;
  usage(nodeName: string, model: string): Usage;
  /** The node's own load figures as last scraped; absent or undefined = none. */
  load?(nodeName: string): LoadReading | undefined;
  /**
   * Connections the gateway opens per node (upstream.max_connections): a node with this many
   * requests in flight through the gateway has none left for another. Undefined: no limit.
   */
  readonly connectionLimit?: number;
}

/** The live journal of in-flight count changes by position (a bounded ring: old changes are forgotten). */
export interface InFlightJournal {
  /** Changes so far; the next one is number `total`. */
  readonly total: number;
  /** The position change `seq` was at; undefined once forgotten (read every count again). */
  positionAt(seq: number): number | undefined;
}

/**
 * One request's claim on a node for one upstream attempt: it counts in the node's in-flight
 * requests and holds `tokens` of the model's slots and context budget, both taken and returned
 * together. Release exactly once (extra calls are ignored).
 */
export interface Lease {
  readonly node: string;
  readonly model: string;
  readonly tokens: number;
  release(): void;
}

/** What a returned lease may have freed, so requests waiting for it can try again. */
export interface LeaseReturn {
  readonly node: string;
  readonly model: string;
  /** The node had used up its connections (upstream.max_connections) and has one back. */
  readonly connectionFreed: boolean;
}

/** The node's live in-flight count, by its position when the snapshot has the counts by position. */
export function inFlightOf(snapshot: RoutingSnapshot, node: NodeView): number {
  const counts = snapshot.inFlightByPosition;
  const position = node.position;
  return counts !== undefined && position !== undefined ? (counts[position] ?? 0) : snapshot.inFlight(node.spec.name);
}

/** The fields of a view that only its learned figures change (capacity/learned-figures.ts): each answer may move them. */
const LEARNED_FIELDS: ReadonlySet<string> = new Set(['tokenRatios', 'decodeRates']);

/**
 * Whether two views of a node differ at most in their learned figures: every other field is the same
 * object (the registry keeps spec, health, listing, capacity and facts across a rebuild for a learned
 * figure) and the wake state holds the same values. What depends only on those fields (the route
 * index's verdicts on the node) still holds for `b`; a reader of the learned figures reads them from `b`.
 */
export function sameBesidesLearned(a: NodeView, b: NodeView): boolean {
  if (a.wake.lastSentAt !== b.wake.lastSentAt || a.wake.wakingUntil !== b.wake.wakingUntil) return false;
  const fields = a as unknown as Readonly<Record<string, unknown>>;
  const others = b as unknown as Readonly<Record<string, unknown>>;
  for (const key in fields) {
    if (key === 'wake' || LEARNED_FIELDS.has(key)) continue;
    if (!(key in others) || fields[key] !== others[key]) return false;
  }
  // A field on `b` alone differs too, unless it is a learned one (absent until a figure is learned).
  for (const key in others) if (!LEARNED_FIELDS.has(key) && !(key in fields)) return false;
  return true;
}
