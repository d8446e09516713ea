// Pure: would the reconciler undo an operator's load or unload? The load of `model` on `node`
// (unloading `evict` there first) is played forward: the reconciler's plan (reconcile-plan.ts) over
// the facts after the load, round after round, with back-offs over and no hold of the model there.
// When a round would unload the model there again to load a warm (or preloaded) one, the load is
// refused up front, naming what keeps the node's slots, unless the operator passes `evict_warm`
// (then the load is held: operator-holds.ts). An unload likewise: refused when a round would load
// the model there again. Never "done", then silently undone.

import { formatDurationMs } from '#src/config/index.ts';
import type { ModelFacts, NodeFacts } from './model-decision.ts';
import { planReconcile, type ReconcileInput, type ReconcileStep } from './reconcile-plan.ts';

export interface OperatorLoad {
  readonly model: string;
  readonly node: string;
  /** The idle model the load unloads first, if any. */
  readonly evict: string | undefined;
}

export type OperatorLoadJudgement =
  | { readonly stands: true }
  /** `reclaim`: the reconciler's step that would unload the loaded model again. */
  | { readonly stands: false; readonly reclaim: ReconcileStep; readonly reason: string };

/** The facts after the load: the model running on its node, the evicted one gone, no switch under way. */
function afterLoad(nodes: readonly NodeFacts[], load: OperatorLoad): NodeFacts[] {
  return nodes.map((node) => {
    if (node.name !== load.node) return { ...node, busy: false };
    const listed = node.models.some((m) => m.id === load.model);
    const models: ModelFacts[] = (
      listed ? node.models : [...node.models, { id: load.model, running: false, serving: true, inFlight: 0 }]
    ).map((m) => {
      if (m.id === load.model) return { ...m, running: true, serving: true };
      if (m.id === load.evict) return { ...m, running: false };
      return m;
    });
    return { ...node, busy: false, models };
  });
}

/** The facts after one round's steps, as if each load was done. */
function afterSteps(nodes: readonly NodeFacts[], steps: readonly ReconcileStep[]): NodeFacts[] {
  return steps.reduce<NodeFacts[]>((acc, step) => afterLoad(acc, step), [...nodes]);
}

/** How the model stands in the desired state, for the reason: "pinned 'p'", "warm 'w'", "'x'". */
function labelled(model: string, input: ReconcileInput): string {
  const desired = input.desired.find((d) => d.model === model)?.desired;
  const words = [
    input.pinned(model) || desired?.pin === true ? 'pinned' : '',
    (desired?.warm ?? 0) > 0 ? 'warm' : '',
    desired?.preload === true ? 'preloaded' : '',
  ].filter(Boolean);
  return `${words.join(' ')}${words.length > 0 ? ' ' : ''}'${model}'`;
}

function reasonFor(load: OperatorLoad, reclaim: ReconcileStep, input: ReconcileInput, holdForMs: number): string {
  const node = input.nodes.find((n) => n.name === load.node);
  const running = (node?.models ?? []).filter((m) => m.running && m.id !== load.model).map((m) => labelled(m.id, input));
  const max = node?.maxInstances === undefined ? '' : `it runs at most ${node.maxInstances} models`;
  const slots = running.length === 0 ? max : `${max}${max === '' ? '' : ' and '}its slots hold ${running.join(', ')}`;
  const cost = load.evict === undefined ? '' : `, unloading ${labelled(load.evict, input)}`;
  const kind = reclaim.why === 'warm' ? 'warm' : 'preloaded';
  return (
    `loading '${load.model}' on node '${load.node}'${cost} would not stand: the reconciler would unload it again to load ${kind} '${reclaim.model}' there` +
    `${slots === '' ? '' : ` (${slots})`}; pass "evict_warm": true to hold '${load.model}' there for ${formatDurationMs(holdForMs)} ([models] operator_hold) or until you unload it, ` +
    `or change '${reclaim.model}' in [[models.available]]`
  );
}

/** The plan played forward from `nodes`, round after round, until a step is `undoes` (returned) or nothing is left to do. */
function playForward(
  nodes: NodeFacts[],
  input: ReconcileInput,
  own: { readonly node: string; readonly model: string },
  undoes: (step: ReconcileStep) => boolean,
): ReconcileStep | undefined {
  const preloadedSince = new Set<string>();
  // Bounded: each round loads a model the reconciler keeps, never unloaded again by it.
  const rounds = input.desired.length * input.nodes.length + 1;
  let facts = nodes;
  for (let round = 0; round < rounds; round++) {
    const steps = planReconcile({
      ...input,
      nodes: facts,
      heldOff: () => false,
      preloaded: (node, model) => input.preloaded(node, model) || preloadedSince.has(`${node}\u0000${model}`),
      held: (node, model) => !(node === own.node && model === own.model) && input.held(node, model),
      heldOut: (node, model) => !(node === own.node && model === own.model) && input.heldOut(node, model),
    });
    if (steps.length === 0) return undefined;
    const undone = steps.find(undoes);
    if (undone !== undefined) return undone;
    for (const step of steps) if (step.why === 'preload') preloadedSince.add(`${step.node}\u0000${step.model}`);
    facts = afterSteps(facts, steps);
  }
  return undefined;
}

/**
 * `input`: the reconciler's input now (the desired state, the facts, the holds). The model's own
 * hold there is left out: this asks what would happen without one.
 */
export function judgeOperatorLoad(load: OperatorLoad, input: ReconcileInput, holdForMs: number): OperatorLoadJudgement {
  const reclaim = playForward(afterLoad(input.nodes, load), input, load, (s) => s.node === load.node && s.evict === load.model);
  return reclaim === undefined
    ? { stands: true }
    : { stands: false, reclaim, reason: reasonFor(load, reclaim, input, holdForMs) };
}

/** The same for an unload of `model` on `node`: undone when a round would load it there again. */
export function judgeOperatorUnload(
  unload: { readonly model: string; readonly node: string },
  input: ReconcileInput,
  holdForMs: number,
): OperatorLoadJudgement {
  const after = input.nodes.map((n) =>
    n.name !== unload.node
      ? { ...n, busy: false }
      : { ...n, busy: false, models: n.models.map((m) => (m.id === unload.model ? { ...m, running: false } : m)) },
  );
  const reclaim = playForward(after, input, unload, (s) => s.node === unload.node && s.model === unload.model);
  if (reclaim === undefined) return { stands: true };
  const reason =
    `unloading ${labelled(unload.model, input)} on node '${unload.node}' would not stand: the reconciler would load it there again (${reclaim.why === 'warm' ? `warm = ${input.desired.find((d) => d.model === unload.model)?.desired.warm ?? 0}, and this is the node it would choose` : 'preload'}); ` +
    `pass "evict_warm": true to hold it off '${unload.node}' for ${formatDurationMs(holdForMs)} ([models] operator_hold) or until you load it there, or change '${unload.model}' in [[models.available]]`;
  return { stands: false, reclaim, reason };
}
