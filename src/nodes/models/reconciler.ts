// The reconciler's shell: on each round (a node's poll ended) it plans (reconcile-plan.ts) over the
// live views and runs the steps through the model manager, one per node at a time. It remembers
// which models it preloaded on a node since the node came up (forgotten when the node sleeps or
// dies, so a wake preloads again) and logs only transitions: a step started, and what came of it
// (the manager's audit line), never "nothing to do". It keeps the operator's holds
// (operator-holds.ts): a model an admin load put on a node is not unloaded there to make room while
// the hold lasts, one an admin unload took off is not loaded there, and an admin action it would
// undo is judged before it is sent (operator-load.ts). The holds are kept in a HoldStore
// (this gateway's memory, or with [cluster] the cluster store, `shareHolds`): each round first reads
// the holds every replica made, so no replica's round undoes a load made through another.

import type { DesiredModelState } from '#src/config/index.ts';
import type { ModelManager } from './model-manager.ts';
import type { NodeFacts } from './model-decision.ts';
import { planReconcile, type ReconcileStep } from './reconcile-plan.ts';
import { OperatorHolds, type HoldKind, type HoldsState, type OperatorHold } from './operator-holds.ts';
import { MemoryHoldStore, type HoldStore } from './hold-store.ts';
import { judgeOperatorLoad, judgeOperatorUnload, type OperatorLoad, type OperatorLoadJudgement } from './operator-load.ts';

export interface ReconcilerDeps {
  readonly manager: Pick<ModelManager, 'act' | 'failure'>;
  readonly facts: () => readonly NodeFacts[];
  readonly desired: () => readonly { readonly model: string; readonly desired: DesiredModelState }[];
  readonly warmExcluded: (node: string) => boolean;
  readonly queued: (model: string) => number;
  readonly pinned: (model: string) => boolean;
  readonly onError: (error: unknown) => void;
  /** Epoch ms (the listings' clock). */
  readonly now: () => number;
  /** Monotonic ms (the holds' clock). */
  readonly monotonicMs: () => number;
  /** How long an operator's load holds ([models] operator_hold). */
  readonly holdMs: () => number;
}

export class ModelReconciler {
  readonly #deps: ReconcilerDeps;
  readonly #preloaded = new Set<string>();
  /** Epoch ms each node was first seen up since it was last unavailable: only a listing after it counts. */
  readonly #upSince = new Map<string, number>();
  readonly #holds: OperatorHolds;
  /** Rounds ended so far (GET /admin/models: a reader can wait for the next one). */
  readonly #count = { rounds: 0 };
  #running = false;
  #again = false;
  #stopped = false;

  constructor(deps: ReconcilerDeps) {
    this.#deps = deps;
    this.#holds = new OperatorHolds(new MemoryHoldStore(deps.monotonicMs));
  }

  /** [cluster] joined: the operator's holds are kept in the cluster store, read by every replica's rounds. */
  shareHolds(store: HoldStore, replica: string): void {
    this.#holds.share(store, replica, this.#deps.monotonicMs());
    this.poke();
  }

  /** A round: runs now, or once more after the one under way. */
  poke(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    this.#round()
      .catch((error: unknown) => this.#deps.onError(error))
      .finally(() => {
        this.#count.rounds += 1;
        this.#running = false;
        if (this.#again) {
          this.#again = false;
          this.poke();
        }
      });
  }

  stop(): void {
    this.#stopped = true;
  }

  /** The steps one round would take now, without taking them (for the models view). */
  plan(): ReconcileStep[] {
    return planReconcile(this.#input(this.#deps.facts()));
  }

  /** Whether an admin load of `load.model` on `load.node` would stand, over these facts (taken for the decision). */
  judgeLoad(load: OperatorLoad, nodes: readonly NodeFacts[]): OperatorLoadJudgement {
    return judgeOperatorLoad(load, this.#input(nodes), this.#deps.holdMs());
  }

  /** Whether an admin unload of `model` on `node` would stand. */
  judgeUnload(unload: { readonly model: string; readonly node: string }, nodes: readonly NodeFacts[]): OperatorLoadJudgement {
    return judgeOperatorUnload(unload, this.#input(nodes), this.#deps.holdMs());
  }

  /** The operator loaded (or unloaded) `model` on `node`: so it holds there for [models] operator_hold. */
  hold(node: string, model: string, kind: HoldKind): OperatorHold {
    return this.#holds.hold(node, model, kind, this.#deps.monotonicMs(), this.#deps.holdMs());
  }

  /** The operator's hold of `model` on `node` ends (an unload of it, or its action did not go through). */
  release(node: string, model: string): void {
    this.#holds.release(node, model, this.#deps.monotonicMs(), this.#deps.holdMs());
  }

  /** The holds in force now (for the models view). */
  holds(): OperatorHold[] {
    return this.#holds.list(this.#deps.monotonicMs());
  }

  /** Settles once the holds and releases asked so far are written (or failed: the store is lost). */
  async holdsWritten(): Promise<void> {
    await this.#holds.written();
  }

  /** Whether the hold of `model` on `node` is kept only by this replica (the store did not take it). */
  heldHereOnly(node: string, model: string): boolean {
    return this.#holds.unwritten(node, model);
  }

  /** Where the holds are kept, whether the store is read now, and the rounds ended so far. */
  status(): HoldsState & { readonly rounds: number } {
    return { ...this.#holds.state(), rounds: this.#count.rounds };
  }

  async #round(): Promise<void> {
    // The holds any replica made, read once per round (a lost store: the ones this replica knows).
    await this.#holds.sync(this.#deps.monotonicMs);
    const desired = this.#deps.desired();
    if (desired.length === 0) return;
    const nodes = this.#deps.facts();
    this.#notePreloaded(nodes);
    const steps = planReconcile(this.#input(nodes));
    const wanted = new Set(desired.map((d) => d.model));
    await Promise.all(
      steps.map(async (step) => {
        // The manager decides again over the live facts: the held models there stay as the plan kept them.
        const keep = (m: string): boolean =>
          wanted.has(m) || this.#holds.held(step.node, m, this.#deps.monotonicMs()) === 'loaded';
        const outcome = await this.#deps.manager.act('load', step.model, step.node, 'reconciler', { keep });
        if (step.why === 'preload' && (outcome.outcome === 'done' || outcome.outcome === 'already'))
          this.#preloaded.add(`${step.node}\u0000${step.model}`);
      }),
    );
  }

  #input(nodes: readonly NodeFacts[]): Parameters<typeof planReconcile>[0] {
    const deps = this.#deps;
    return {
      desired: deps.desired(),
      nodes,
      preloaded: (node, model) => this.#preloaded.has(`${node}\u0000${model}`),
      heldOff: (node, model) => deps.manager.failure(node, model) !== undefined,
      warmExcluded: deps.warmExcluded,
      queued: deps.queued,
      pinned: deps.pinned,
      held: (node, model) => this.#holds.held(node, model, deps.monotonicMs()) === 'loaded',
      heldOut: (node, model) => this.#holds.held(node, model, deps.monotonicMs()) === 'unloaded',
    };
  }

  /**
   * A model found running counts as preloaded; a node that is not up forgets its preloads. Only a
   * listing taken after the node came up counts: an asleep node keeps its last listing, and on the
   * wake that stale one still shows what ran before the sleep.
   */
  #notePreloaded(nodes: readonly NodeFacts[]): void {
    for (const node of nodes) {
      if (node.unavailable !== undefined) {
        for (const key of [...this.#preloaded]) if (key.startsWith(`${node.name}\u0000`)) this.#preloaded.delete(key);
        this.#upSince.delete(node.name);
        continue;
      }
      let upSince = this.#upSince.get(node.name);
      if (upSince === undefined) {
        upSince = this.#deps.now();
        this.#upSince.set(node.name, upSince);
      }
      if (node.listedAt === undefined || node.listedAt <= upSince) continue;
      for (const model of node.models) if (model.running) this.#preloaded.add(`${node.name}\u0000${model.id}`);
    }
  }
}
