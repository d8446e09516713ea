// An operator's load or unload (the admin API, the CLI, the dashboard): the manager's action, with
// the reconciler's say. A load the reconciler would undo (operator-load.ts) is refused `warm` (409)
// naming what keeps the slot, unless `evictWarm` is passed; a load that is done (or already so)
// holds the model on its node for [models] operator_hold (operator-holds.ts), and the answer says
// until when. An unload of it ends the hold.

import type { ModelAction } from '#src/kinds/index.ts';
import type { ModelActionOutcome, ModelManager } from './model-manager.ts';
import type { ModelReconciler } from './reconciler.ts';
import type { ReconcileStep } from './reconcile-plan.ts';

export interface OperatorActionDeps {
  readonly manager: Pick<ModelManager, 'act'>;
  readonly reconciler: Pick<ModelReconciler, 'judgeLoad' | 'hold' | 'release'>;
  /** Models the reconciler keeps loaded (warm, preload): unloaded to make room last. */
  readonly kept: (model: string) => boolean;
  /** Epoch ms, for the hold's end in the answer. */
  readonly now: () => number;
}

export interface OperatorActionOptions {
  /** `"evict_warm": true`: load even where the reconciler keeps the slot for a warm model; the hold keeps it from undoing it. */
  readonly evictWarm?: boolean;
}

export async function actAsOperator(deps: OperatorActionDeps, action: ModelAction, model: string, node: string | undefined, options: OperatorActionOptions = {}): Promise<ModelActionOutcome> {
  if (action === 'unload') {
    const outcome = await deps.manager.act('unload', model, node, 'admin');
    if (outcome.outcome === 'done' || outcome.outcome === 'already') deps.reconciler.release(outcome.node, model);
    return outcome;
  }
  let overridden: ReconcileStep | undefined;
  const outcome = await deps.manager.act('load', model, node, 'admin', {
    kept: deps.kept,
    vet: (load, nodes) => {
      const judged = deps.reconciler.judgeLoad({ model, ...load }, nodes);
      if (judged.stands) return undefined;
      if (options.evictWarm === true) {
        overridden = judged.reclaim;
        return undefined;
      }
      return { code: 'warm', reason: judged.reason };
    },
  });
  if (outcome.outcome !== 'done' && outcome.outcome !== 'already') return outcome;
  const hold = deps.reconciler.hold(outcome.node, model);
  const heldUntil = new Date(deps.now() + (hold.untilMs - hold.sinceMs)).toISOString();
  const displaced = overridden === undefined ? 'to make room' : `to load ${overridden.why} '${overridden.model}' there ("evict_warm")`;
  return { ...outcome, heldUntil, detail: `${outcome.detail}; held there by the operator until ${heldUntil} ([models] operator_hold) or an unload: the reconciler does not unload it ${displaced} before then` };
}
