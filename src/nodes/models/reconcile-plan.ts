// Pure: what the reconciler does this round to bring observed state to the desired one
// ([[models.available]] warm / preload). At most one load per node per round (and none on a node
// with an operation under way); a (node, model) whose load failed is held off until its back-off
// ends; the choice of node and of an idle model to unload first is the model decision's. A model an
// operator's load holds on a node (operator-holds.ts) is never unloaded there to make room: a warm
// model it displaced is not restored on that node while the hold lasts (it may be elsewhere); one
// an operator's unload holds off a node is not loaded there.

import type { DesiredModelState } from '#src/config/index.ts';
import { decideModelAction, type NodeFacts } from './model-decision.ts';

export interface DesiredModel {
  readonly model: string;
  readonly desired: DesiredModelState;
}

export interface ReconcileInput {
  readonly desired: readonly DesiredModel[];
  readonly nodes: readonly NodeFacts[];
  /** The model was preloaded on (or found running on) the node since the node last came up. */
  readonly preloaded: (node: string, model: string) => boolean;
  /** A failed load of the model on the node is still backing off. */
  readonly heldOff: (node: string, model: string) => boolean;
  /** Nodes whose `warm = false` keeps them out of `warm` choices. */
  readonly warmExcluded: (node: string) => boolean;
  readonly queued: (model: string) => number;
  readonly pinned: (model: string) => boolean;
  /** An operator's load holds the model on the node now (never unloaded there to make room). */
  readonly held: (node: string, model: string) => boolean;
  /** An operator's unload holds the model off the node now (not loaded there). */
  readonly heldOut: (node: string, model: string) => boolean;
}

export interface ReconcileStep {
  readonly model: string;
  readonly node: string;
  readonly why: 'warm' | 'preload';
  /** The idle model the load unloads there first to make room, if any. */
  readonly evict: string | undefined;
}

const runsOn = (node: NodeFacts, model: string): boolean => node.models.some((m) => m.id === model && m.running);

/** The node's facts with the models an operator's load holds there marked `held`. */
export function withHolds(node: NodeFacts, held: (node: string, model: string) => boolean): NodeFacts {
  if (!node.models.some((m) => m.running && held(node.name, m.id))) return node;
  return { ...node, models: node.models.map((m) => (m.running && held(node.name, m.id) ? { ...m, held: true } : m)) };
}

export function planReconcile(input: ReconcileInput): ReconcileStep[] {
  const steps: ReconcileStep[] = [];
  const claimed = new Set<string>();
  const nodes = input.nodes.map((node) => withHolds(node, input.held));
  const free = (node: NodeFacts): NodeFacts => (claimed.has(node.name) ? { ...node, busy: true } : node);
  // A model the operator wants loaded is never unloaded to make room for another one (no thrashing).
  const wanted = new Set(
    input.desired.filter((d) => d.desired.warm > 0 || d.desired.preload || d.desired.pin).map((d) => d.model),
  );
  const decide = { action: 'load' as const, queued: input.queued, pinned: (m: string) => wanted.has(m) || input.pinned(m) };
  for (const { model, desired } of input.desired) {
    if (desired.warm > 0) {
      const warmNow = nodes.filter((n) => n.unavailable === undefined && runsOn(n, model)).length;
      if (warmNow < desired.warm) {
        const choices = nodes
          .filter(
            (n) =>
              !input.warmExcluded(n.name) && !input.heldOff(n.name, model) && !input.heldOut(n.name, model) && !runsOn(n, model),
          )
          .map(free);
        const verdict = decideModelAction({ ...decide, model, node: undefined, nodes: choices });
        if (verdict.verdict === 'act') {
          steps.push({ model, node: verdict.node, why: 'warm', evict: verdict.evict });
          claimed.add(verdict.node);
        }
      }
    }
    if (!desired.preload) continue;
    for (const node of nodes) {
      if (
        claimed.has(node.name) ||
        runsOn(node, model) ||
        input.preloaded(node.name, model) ||
        input.heldOff(node.name, model) ||
        input.heldOut(node.name, model)
      )
        continue;
      const verdict = decideModelAction({ ...decide, model, node: node.name, nodes: nodes.map(free) });
      if (verdict.verdict !== 'act') continue;
      steps.push({ model, node: node.name, why: 'preload', evict: verdict.evict });
      claimed.add(node.name);
    }
  }
  return steps;
}
