// Pure: whether a model may be loaded or unloaded now, and where. Over plain facts of each node
// (whether its kind can, whether it is up, what it runs and how busy each model is) and the
// gateway's queue depth and pins per model. An unload never touches a model with a request in
// flight or queued; a load on a full router first unloads an idle model that is not pinned
// (the router's own LRU choice could be a pinned or busy one).

import type { ModelAction } from '#src/kinds/index.ts';

export interface ModelFacts {
  readonly id: string;
  /** Loaded, loading or sleeping. */
  readonly running: boolean;
  /** The node serves it now (serving-now.ts: up, its listing still taken); views list only such nodes as running or serving it. */
  readonly serving: boolean;
  /** Requests of this model on this node through the gateway now. */
  readonly inFlight: number;
  /** An operator's load holds it on this node (operator-holds.ts): never chosen to make room. */
  readonly held?: boolean;
  /** The router's status when it says more than loaded or not (sleeping, downloading, failed, a value not known), with its detail. */
  readonly state?: ModelStateNote;
}

/** A router status worth showing (models-view.ts): the word, a failed child's exit code, a progress, why routing holds it back. */
export interface ModelStateNote {
  readonly status: string;
  readonly exitCode?: number;
  readonly fraction?: number;
  readonly hold?: string;
  readonly unknown: boolean;
}

export interface NodeFacts {
  readonly name: string;
  /** Why the node cannot be asked now (asleep, dead, not yet seen); undefined = it can. */
  readonly unavailable: string | undefined;
  /** Its kind (and role) loads and unloads models on request. */
  readonly canManage: boolean;
  /** A load or unload the gateway sent is still under way there (one at a time per node). */
  readonly busy: boolean;
  /** Models it may run at once; undefined = no limit known. */
  readonly maxInstances: number | undefined;
  /** The models it lists. */
  readonly models: readonly ModelFacts[];
  /** Epoch ms of the listing these facts are from (undefined = none yet): a listing from before the node slept is stale. */
  readonly listedAt?: number | undefined;
}

export interface ModelActionInput {
  readonly action: ModelAction;
  readonly model: string;
  /** The node asked for; undefined = any (load only). */
  readonly node: string | undefined;
  readonly nodes: readonly NodeFacts[];
  /** Requests waiting in the gateway for the model. */
  readonly queued: (model: string) => number;
  readonly pinned: (model: string) => boolean;
  /** Models the reconciler keeps loaded (warm, preload): unloaded to make room only when nothing else is idle. */
  readonly kept?: (model: string) => boolean;
}

/** `warm`: the load would take a slot the reconciler keeps for a warm (or preloaded) model (operator-load.ts). */
export type RefusalCode =
  | 'unknown_node'
  | 'node_required'
  | 'not_listed'
  | 'not_supported'
  | 'node_unavailable'
  | 'busy'
  | 'in_flight'
  | 'queued'
  | 'pinned'
  | 'no_room'
  | 'warm';

export type ModelActionVerdict =
  /** Act on `node`; `evict` = unload that idle model there first. */
  | { readonly verdict: 'act'; readonly node: string; readonly evict: string | undefined }
  /** Nothing to do: it is already so. */
  | { readonly verdict: 'already'; readonly node: string; readonly detail: string }
  | { readonly verdict: 'refused'; readonly code: RefusalCode; readonly reason: string };

const refuse = (code: RefusalCode, reason: string): ModelActionVerdict => ({ verdict: 'refused', code, reason });

/** An idle model that may be unloaded: running, nothing in flight or queued, not pinned, not held by an operator's load. */
function isSpare(model: ModelFacts, input: ModelActionInput): boolean {
  return model.running && model.inFlight === 0 && input.queued(model.id) === 0 && !input.pinned(model.id) && model.held !== true;
}

/** The order in which idle models are unloaded to make room: those the reconciler does not keep first, then by name. */
function victimOrder(input: ModelActionInput): (a: ModelFacts, b: ModelFacts) => number {
  const kept = (m: ModelFacts): number => (input.kept?.(m.id) === true ? 1 : 0);
  return (a, b) => kept(a) - kept(b) || a.id.localeCompare(b.id);
}

/** Why this node cannot take part (for the model), or undefined. */
function nodeObstacle(node: NodeFacts, model: string): { code: RefusalCode; reason: string } | undefined {
  if (!node.models.some((m) => m.id === model))
    return { code: 'not_listed', reason: `node '${node.name}' does not list model '${model}'` };
  if (!node.canManage)
    return {
      code: 'not_supported',
      reason: `node '${node.name}' cannot load or unload models on request (its kind manages its own models)`,
    };
  if (node.unavailable !== undefined) return { code: 'node_unavailable', reason: `node '${node.name}' is ${node.unavailable}` };
  if (node.busy) return { code: 'busy', reason: `a load or unload is already under way on node '${node.name}'` };
  return undefined;
}

interface Room {
  readonly fits: boolean;
  readonly evict: string | undefined;
  /** Higher = more room: free instances, then spare models. */
  readonly score: number;
}

function roomOn(node: NodeFacts, model: string, input: ModelActionInput): Room {
  const running = node.models.filter((m) => m.running && m.id !== model);
  const spare = running.filter((m) => isSpare(m, input)).sort(victimOrder(input));
  if (node.maxInstances === undefined) return { fits: true, evict: undefined, score: 1_000_000 - running.length };
  const free = node.maxInstances - running.length;
  if (free > 0) return { fits: true, evict: undefined, score: 1000 * free + spare.length };
  const victim = spare[0];
  if (victim === undefined) return { fits: false, evict: undefined, score: 0 };
  // At equal room, a node whose victim nobody keeps before one that would cost a warm or preloaded model.
  return { fits: true, evict: victim.id, score: spare.length - (input.kept?.(victim.id) === true ? 0.5 : 0) };
}

function decideLoad(input: ModelActionInput): ModelActionVerdict {
  const candidates = input.node === undefined ? input.nodes : input.nodes.filter((n) => n.name === input.node);
  const runningOn = candidates.find((n) => n.models.some((m) => m.id === input.model && m.running));
  if (runningOn !== undefined)
    return {
      verdict: 'already',
      node: runningOn.name,
      detail: `model '${input.model}' is already running on node '${runningOn.name}'`,
    };
  const reasons: string[] = [];
  let best: { node: NodeFacts; room: Room } | undefined;
  let firstCode: RefusalCode | undefined;
  for (const node of candidates) {
    const obstacle = nodeObstacle(node, input.model);
    const room = obstacle === undefined ? roomOn(node, input.model, input) : undefined;
    if (obstacle !== undefined || room === undefined || !room.fits) {
      const why = obstacle ?? {
        code: 'no_room' as const,
        reason: `node '${node.name}' runs ${node.maxInstances ?? 0} models (its max), none idle and unpinned`,
      };
      // Asked for any node: the nodes that do not list the model are not worth naming.
      if (why.code === 'not_listed' && input.node === undefined) continue;
      reasons.push(why.reason);
      firstCode ??= why.code;
      continue;
    }
    if (best === undefined || room.score > best.room.score) best = { node, room };
  }
  if (best !== undefined) return { verdict: 'act', node: best.node.name, evict: best.room.evict };
  if (firstCode === undefined) return refuse('not_listed', `no node lists model '${input.model}'`);
  return refuse(firstCode, reasons.join('; '));
}

function decideUnload(input: ModelActionInput, node: NodeFacts): ModelActionVerdict {
  const obstacle = nodeObstacle(node, input.model);
  if (obstacle !== undefined) return refuse(obstacle.code, obstacle.reason);
  // A model the last listing shows not running is asked all the same (the listing may lag a load);
  // the node answers that it is not running, which the manager reports as `already`.
  const model = node.models.find((m) => m.id === input.model);
  if (model === undefined) return refuse('not_listed', `node '${node.name}' does not list model '${input.model}'`);
  if (input.pinned(input.model)) return refuse('pinned', `model '${input.model}' is pinned ([[models.available]] pin = true)`);
  if (model.inFlight > 0)
    return refuse('in_flight', `${model.inFlight} request(s) for '${input.model}' are in flight on node '${node.name}'`);
  const queued = input.queued(input.model);
  if (queued > 0) return refuse('queued', `${queued} request(s) for '${input.model}' are queued in the gateway`);
  return { verdict: 'act', node: node.name, evict: undefined };
}

export function decideModelAction(input: ModelActionInput): ModelActionVerdict {
  if (input.node !== undefined && !input.nodes.some((n) => n.name === input.node))
    return refuse('unknown_node', `no node named '${input.node}'`);
  if (input.action === 'load') return decideLoad(input);
  if (input.node === undefined) return refuse('node_required', 'an unload names its node ("node")');
  const node = input.nodes.find((n) => n.name === input.node);
  return node === undefined ? refuse('unknown_node', `no node named '${input.node}'`) : decideUnload(input, node);
}
