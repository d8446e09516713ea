// Pure: what the reconciler does this round to bring observed state to the desired one
// ([[models.available]] warm / preload). At most one load per node per round (and none on a node
// with an operation under way); a (node, model) whose load failed is held off until its back-off
// ends; the choice of node and of an idle model to unload first is the model decision's.

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
}

export interface ReconcileStep {
  readonly model: string;
  readonly node: string;
  readonly why: 'warm' | 'preload';
}

const runsOn = (node: NodeFacts, model: string): boolean => node.models.some((m) => m.id === model && m.running);

export function planReconcile(input: ReconcileInput): ReconcileStep[] {
  const steps: ReconcileStep[] = [];
  const claimed = new Set<string>();
  const free = (node: NodeFacts): NodeFacts => (claimed.has(node.name) ? { ...node, busy: true } : node);
  // A model the operator wants loaded is never unloaded to make room for another one (no thrashing).
  const wanted = new Set(input.desired.filter((d) => d.desired.warm > 0 || d.desired.preload || d.desired.pin).map((d) => d.model));
  const decide = { action: 'load' as const, queued: input.queued, pinned: (m: string) => wanted.has(m) || input.pinned(m) };
  for (const { model, desired } of input.desired) {
    if (desired.warm > 0) {
      const warmNow = input.nodes.filter((n) => n.unavailable === undefined && runsOn(n, model)).length;
      if (warmNow < desired.warm) {
        const nodes = input.nodes.filter((n) => !input.warmExcluded(n.name) && !input.heldOff(n.name, model) && !runsOn(n, model)).map(free);
        const verdict = decideModelAction({ ...decide, model, node: undefined, nodes });
        if (verdict.verdict === 'act') {
          steps.push({ model, node: verdict.node, why: 'warm' });
          claimed.add(verdict.node);
        }
      }
    }
    if (!desired.preload) continue;
    for (const node of input.nodes) {
      if (claimed.has(node.name) || runsOn(node, model) || input.preloaded(node.name, model) || input.heldOff(node.name, model)) continue;
      const verdict = decideModelAction({ ...decide, model, node: node.name, nodes: input.nodes.map(free) });
      if (verdict.verdict !== 'act') continue;
      steps.push({ model, node: node.name, why: 'preload' });
      claimed.add(node.name);
    }
  }
  return steps;
}
