// An operator's load or unload (the admin API, the CLI, the dashboard): the manager's action, with
// the reconciler's say. An action the reconciler would undo (operator-load.ts) is refused `warm`
// (409) naming what it would cost, unless `evictWarm` is passed. A load that is done (or already
// so) holds the model on its node for [models] operator_hold (operator-holds.ts); an unload made
// with the override holds the model off the node as long, and the answer says until when; any
// other unload ends the model's hold there (a preloaded model's unload stands by itself until the
// node restarts, docs/models.md). The answer waits until the hold (or its end) is written where the
// holds are kept (with [cluster], the store every replica's reconciler reads), and says so when
// only this replica keeps it (the store is lost).

import type { ModelAction } from '#src/kinds/index.ts';
import type { ModelActionOutcome, ModelManager } from './model-manager.ts';
import type { ModelReconciler } from './reconciler.ts';
import type { ReconcileStep } from './reconcile-plan.ts';
import type { OperatorLoadJudgement } from './operator-load.ts';

export interface OperatorActionDeps {
  readonly manager: Pick<ModelManager, 'act'>;
  readonly reconciler: Pick<ModelReconciler, 'judgeLoad' | 'judgeUnload' | 'hold' | 'release' | 'holdsWritten' | 'heldHereOnly'>;
  /** Models the reconciler keeps loaded (warm, preload): unloaded to make room last. */
  readonly kept: (model: string) => boolean;
  /** Epoch ms, for the hold's end in the answer. */
  readonly now: () => number;
}

export interface OperatorActionOptions {
  /** `"evict_warm": true`: act even where the reconciler would undo it (a warm model's slot); the hold keeps it from doing so. */
  readonly evictWarm?: boolean;
}

export async function actAsOperator(
  deps: OperatorActionDeps,
  action: ModelAction,
  model: string,
  node: string | undefined,
  options: OperatorActionOptions = {},
): Promise<ModelActionOutcome> {
  let overridden: ReconcileStep | undefined;
  let provisional: string | undefined;
  const vetted = (judged: OperatorLoadJudgement, on: string): { readonly code: 'warm'; readonly reason: string } | undefined => {
    if (!judged.stands && options.evictWarm !== true) return { code: 'warm', reason: judged.reason };
    if (!judged.stands) overridden = judged.reclaim;
    // Held from the moment it is sent: no reconciler round between the node's answer and the hold.
    if (action === 'load' || overridden !== undefined) {
      deps.reconciler.hold(on, model, action === 'load' ? 'loaded' : 'unloaded');
      provisional = on;
    }
    return undefined;
  };
  const outcome = await deps.manager.act(action, model, node, 'admin', {
    kept: deps.kept,
    vet: (op, nodes) =>
      vetted(
        action === 'load'
          ? deps.reconciler.judgeLoad({ model, ...op }, nodes)
          : deps.reconciler.judgeUnload({ model, node: op.node }, nodes),
        op.node,
      ),
  });
  if (outcome.outcome !== 'done' && outcome.outcome !== 'already') {
    if (provisional === undefined) return outcome;
    deps.reconciler.release(provisional, model);
    await deps.reconciler.holdsWritten();
    return outcome;
  }
  if (action === 'unload' && overridden === undefined) {
    deps.reconciler.release(outcome.node, model);
    await deps.reconciler.holdsWritten();
    return outcome;
  }
  const hold = deps.reconciler.hold(outcome.node, model, action === 'load' ? 'loaded' : 'unloaded');
  await deps.reconciler.holdsWritten();
  const heldUntil = new Date(deps.now() + (hold.untilMs - hold.sinceMs)).toISOString();
  const where = deps.reconciler.heldHereOnly(outcome.node, model)
    ? ' (kept by this replica only for now: the cluster store did not take it; GET /admin/models says why)'
    : '';
  if (action === 'unload') {
    return {
      ...outcome,
      heldUntil,
      detail: `${outcome.detail}; held off there by the operator until ${heldUntil} ([models] operator_hold) or a load: the reconciler does not load it there before then${where}`,
    };
  }
  const displaced =
    overridden === undefined ? 'to make room' : `to load ${overridden.why} '${overridden.model}' there ("evict_warm")`;
  return {
    ...outcome,
    heldUntil,
    detail: `${outcome.detail}; held there by the operator until ${heldUntil} ([models] operator_hold) or an unload: the reconciler does not unload it ${displaced} before then${where}`,
  };
}
