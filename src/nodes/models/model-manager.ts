// The shell around model loads and unloads: decides over the live views (model-decision.ts), sends
// at most one operation per node at a time (run-model-op.ts), remembers failed loads with a growing
// back-off and their reason, and writes one audit line per action. Used by the admin API and by the
// reconciler alike.

import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { Clock } from '#src/core/clock.ts';
import { serverKind, type ModelAction } from '#src/kinds/index.ts';
import type { NodeView } from '../node.ts';
import { decideModelAction, type NodeFacts, type RefusalCode } from './model-decision.ts';
import { nodeFacts } from './model-facts.ts';
import { runModelOp } from './run-model-op.ts';
import { backoffAfter, type FailedOp } from './backoff.ts';
import { mayTake, type SwitchBook } from './switch-book.ts';

export interface ModelManagerDeps {
  readonly clock: Clock;
  readonly dispatcher: Dispatcher;
  readonly logger: Logger;
  /** The nodes as routing sees them now. */
  readonly views: () => readonly NodeView[];
  /** Requests of `model` on `node` through the gateway now. */
  readonly inFlight: (node: string, model: string) => number;
  /** Requests waiting in the gateway for `model`. */
  readonly queued: (model: string) => number;
  readonly pinned: (model: string) => boolean;
  /** How long a load may take, confirmation included (routing.load_timeout). */
  readonly loadTimeoutMs: () => number;
  /**
   * Listings of these nodes asked now, settling once applied: before a decision (a router may have
   * switched models for a request since its last poll) and after an operation (so the answer and
   * routing see its effect). Bounded by the discovery timeout.
   */
  readonly refresh: (nodes: readonly string[]) => Promise<unknown>;
  /** The one switch book the scheduler's request switches use too: one operation per node at a time. */
  readonly book: SwitchBook;
  /** An operation gave its ticket back: requests held for it may go. */
  readonly switchEnded: () => void;
}

export type ModelActionOutcome =
  | {
      readonly outcome: 'done';
      readonly action: ModelAction;
      readonly model: string;
      readonly node: string;
      readonly detail: string;
      readonly evicted?: string;
      readonly heldUntil?: string;
    }
  | {
      readonly outcome: 'already';
      readonly action: ModelAction;
      readonly model: string;
      readonly node: string;
      readonly detail: string;
      readonly heldUntil?: string;
    }
  | {
      readonly outcome: 'refused';
      readonly action: ModelAction;
      readonly model: string;
      readonly node: string | undefined;
      readonly code: RefusalCode;
      readonly detail: string;
    }
  | {
      readonly outcome: 'failed';
      readonly action: ModelAction;
      readonly model: string;
      readonly node: string;
      readonly detail: string;
      readonly retryAfterMs: number;
    };

/** Who asked: an admin, the reconciler, or a request's switch (its victim unloaded first). */
export type ActionOrigin = 'admin' | 'reconciler' | 'request';

export interface ActOptions {
  /** Models not to unload to make room, besides the pinned ones (the reconciler's wanted and held models). */
  readonly keep?: (model: string) => boolean;
  /** Models unloaded to make room only when no other idle one is there (the reconciler keeps them loaded). */
  readonly kept?: (model: string) => boolean;
  /**
   * Judges an action the decision would send (its node, and for a load the idle model unloaded
   * first), over the facts the decision read, in the same tick: a refusal stops it before the ticket is taken.
   */
  readonly vet?: (
    op: { readonly node: string; readonly evict: string | undefined },
    nodes: readonly NodeFacts[],
  ) => { readonly code: RefusalCode; readonly reason: string } | undefined;
}

const MAX_ANSWER_BYTES = 1024 * 1024;
const CONFIRM_EVERY_MS = 100;

export class ModelManager {
  readonly #deps: ModelManagerDeps;
  readonly #failed = new Map<string, FailedOp>();

  constructor(deps: ModelManagerDeps) {
    this.#deps = deps;
  }

  /** Nodes with an operation or a request's switch under way (the one switch book). */
  busy(node: string): boolean {
    return this.#deps.book.current(node) !== undefined;
  }

  /**
   * Unloads the idle `victim` before a request's switch loads `model` on `node` (the scheduler
   * holds the node's ticket and chose the victim: idle, not pinned). Confirmed by the listing; one
   * audit line. Never sent while a request for the victim is in flight.
   */
  async evictFor(
    node: string,
    victim: string,
    model: string,
  ): Promise<{ readonly ok: true } | { readonly ok: false; readonly reason: string }> {
    const deps = this.#deps;
    const view = deps.views().find((v) => v.spec.name === node);
    const ops = view === undefined ? undefined : serverKind(view.spec.kind).modelOps(view.capacity.role);
    let outcome: ModelActionOutcome;
    if (view === undefined || ops === undefined) {
      outcome = {
        outcome: 'refused',
        action: 'unload',
        model: victim,
        node,
        code: 'not_supported',
        detail: 'the node cannot unload models',
      };
    } else if (deps.inFlight(node, victim) > 0) {
      outcome = {
        outcome: 'refused',
        action: 'unload',
        model: victim,
        node,
        code: 'in_flight',
        detail: `a request for '${victim}' is in flight on node '${node}'`,
      };
    } else {
      const result = await runModelOp(view.spec, ops, 'unload', victim, this.#options());
      outcome = result.ok
        ? {
            outcome: 'done',
            action: 'unload',
            model: victim,
            node,
            detail: `unloaded to make room for '${model}' (${result.detail})`,
          }
        : { outcome: 'failed', action: 'unload', model: victim, node, detail: result.reason, retryAfterMs: 0 };
    }
    this.#audit(outcome, 'request');
    return outcome.outcome === 'done' ? { ok: true } : { ok: false, reason: outcome.detail };
  }

  #options(): Parameters<typeof runModelOp>[4] {
    const deps = this.#deps;
    return {
      dispatcher: deps.dispatcher,
      clock: deps.clock,
      timeoutMs: deps.loadTimeoutMs(),
      maxBytes: MAX_ANSWER_BYTES,
      confirmEveryMs: CONFIRM_EVERY_MS,
    };
  }

  #audit(outcome: ModelActionOutcome, origin: ActionOrigin): void {
    const line = { event: 'model_action', origin, ...outcome };
    if (outcome.outcome === 'failed') this.#deps.logger.warn(line, `model ${outcome.action} failed`);
    else this.#deps.logger.info(line, `model ${outcome.action} ${outcome.outcome}`);
  }

  /** Loads that failed on `node` and are held off now, with their reason (the reconciler skips them). */
  failure(node: string, model: string): FailedOp | undefined {
    const failed = this.#failed.get(`${node}\u0000${model}`);
    return failed !== undefined && failed.untilMs > this.#deps.clock.monotonicMs() ? failed : undefined;
  }

  /** Every failure remembered (held off or not), for the models view. */
  failures(): readonly (FailedOp & { readonly node: string; readonly model: string })[] {
    return [...this.#failed.entries()].map(([key, failed]) => {
      const [node = '', model = ''] = key.split('\u0000');
      return { ...failed, node, model };
    });
  }

  async act(
    action: ModelAction,
    model: string,
    node: string | undefined,
    origin: ActionOrigin,
    options: ActOptions = {},
  ): Promise<ModelActionOutcome> {
    const outcome = await this.#act(action, model, node, origin, options);
    this.#audit(outcome, origin);
    return outcome;
  }

  async #act(
    action: ModelAction,
    model: string,
    asked: string | undefined,
    origin: ActionOrigin,
    { keep, kept, vet }: ActOptions,
  ): Promise<ModelActionOutcome> {
    const deps = this.#deps;
    // The reconciler's rounds follow a poll already (and a refusal must not make it poll again at once).
    if (origin === 'admin') await deps.refresh(concernedNodes(deps.views(), model, asked));
    const views = deps.views();
    const nodes = views.map((view) => nodeFacts(view, deps.inFlight, this.busy(view.spec.name)));
    const pinned = keep === undefined ? deps.pinned : (m: string): boolean => deps.pinned(m) || (m !== model && keep(m));
    const verdict = decideModelAction({
      action,
      model,
      node: asked,
      nodes,
      queued: deps.queued,
      pinned,
      ...(kept === undefined ? {} : { kept }),
    });
    if (verdict.verdict === 'refused') {
      // A node busy with a switch: the answer names it (whose, and on which replica).
      const current = verdict.code === 'busy' && asked !== undefined ? deps.book.current(asked) : undefined;
      const named = current === undefined ? undefined : mayTake(current, { model, action, by: origin });
      const detail = named !== undefined && !named.ok ? named.reason : verdict.reason;
      return { outcome: 'refused', action, model, node: asked, code: verdict.code, detail };
    }
    if (verdict.verdict === 'already') return { outcome: 'already', action, model, node: verdict.node, detail: verdict.detail };
    const vetoed = vet?.({ node: verdict.node, evict: verdict.evict }, nodes);
    if (vetoed !== undefined)
      return { outcome: 'refused', action, model, node: verdict.node, code: vetoed.code, detail: vetoed.reason };
    const view = views.find((v) => v.spec.name === verdict.node);
    const ops = view === undefined ? undefined : serverKind(view.spec.kind).modelOps(view.capacity.role);
    if (view === undefined || ops === undefined)
      return {
        outcome: 'refused',
        action,
        model,
        node: verdict.node,
        code: 'not_supported',
        detail: 'the node cannot load or unload models',
      };
    const name = verdict.node;
    // The same ticket a request's switch takes: taken in the tick of the decision, so they never overlap.
    const taken = deps.book.take(name, {
      model,
      action,
      by: origin === 'request' ? 'request' : origin,
      loaded: false,
      victim: verdict.evict,
    });
    if (!taken.ok) return { outcome: 'refused', action, model, node: name, code: 'busy', detail: taken.reason };
    // [cluster]: the operation starts only once no other replica's switch holds the node.
    const claimed = await deps.book.confirm?.(name, model);
    if (claimed !== undefined && !claimed.ok) {
      deps.switchEnded();
      return { outcome: 'refused', action, model, node: name, code: 'busy', detail: claimed.reason };
    }
    try {
      const options = this.#options();
      if (verdict.evict !== undefined) {
        const evicted = await runModelOp(view.spec, ops, 'unload', verdict.evict, options);
        if (!evicted.ok)
          return this.#failedOp(
            action,
            model,
            name,
            `unloading the idle model '${verdict.evict}' first failed: ${evicted.reason}`,
          );
      }
      const superseded = (): boolean => deps.inFlight(name, model) > 0 || deps.queued(model) > 0;
      const result = await runModelOp(view.spec, ops, action, model, { ...options, superseded });
      if (!result.ok) return this.#failedOp(action, model, name, result.reason);
      deps.book.markLoaded(name, model);
      this.#failed.delete(`${name}\u0000${model}`);
      if (result.already && verdict.evict === undefined)
        return { outcome: 'already', action, model, node: name, detail: result.detail };
      const evicted = verdict.evict === undefined ? {} : { evicted: verdict.evict };
      return { outcome: 'done', action, model, node: name, detail: result.detail, ...evicted };
    } finally {
      try {
        await deps.refresh([name]);
      } finally {
        deps.book.release(name, model);
        deps.switchEnded();
      }
    }
  }

  #failedOp(action: ModelAction, model: string, node: string, reason: string): ModelActionOutcome {
    const key = `${node}\u0000${model}`;
    const failed = backoffAfter(this.#failed.get(key), reason, this.#deps.clock.monotonicMs());
    this.#failed.set(key, failed);
    return {
      outcome: 'failed',
      action,
      model,
      node,
      detail: reason,
      retryAfterMs: failed.untilMs - this.#deps.clock.monotonicMs(),
    };
  }
}

/** The nodes a decision about `model` reads: the one asked, else those that list it and can load or unload. */
function concernedNodes(views: readonly NodeView[], model: string, asked: string | undefined): string[] {
  if (asked !== undefined) return [asked];
  return views
    .filter((view) => view.modelsById.has(model) && serverKind(view.spec.kind).modelOps(view.capacity.role) !== undefined)
    .map((view) => view.spec.name);
}
