// What admitting a request that loads its model means on a limited router: the load ticket its
// answer settles, the switch it takes in the one switch book, and on a full router the victim the
// gateway unloads first (never pinned, never mid-request) before the admission is answered. A
// victim that would not unload holds the model off the node for a while and the request routes again.
// On a router that holds its switches' requests itself (queue-holder.ts) a load takes no switch and
// names no victim: the request waits in the router, kept in RouterWaits until its load answers.

import type { Clock } from '#src/core/clock.ts';
import { isLoadingEntry, isRunningEntry, kindOfNode, routerQueueOf } from '#src/kinds/index.ts';
import { SwitchTickets, type NodeView, type SwitchBook } from '#src/nodes/index.ts';
import { modelLimit, type RouterSwitchView } from '#src/routing/index.ts';
import { queueHolder, SWITCH_QUEUE_DEFAULT, type QueueHolder, type SwitchQueueConfig } from './queue-holder.ts';
import { RouterWaits } from './router-waits.ts';
import type { Admission, LoadTicket, QueueSettings } from './admission.ts';
import type { EvictionResult, SchedulerEffects } from './effects.ts';
import { loadPlan, loadsModel, RouterSwitches } from './router-switches.ts';

export interface ProtectedModels {
  readonly pinned: ReadonlySet<string>;
  readonly wanted: ReadonlySet<string>;
}

const NONE_PROTECTED: ProtectedModels = Object.freeze({ pinned: new Set<string>(), wanted: new Set<string>() });
/** No load ticket, no victim: what a request for a model that runs on its node gets. */
export const NO_TICKET: { readonly ticket: undefined; readonly victim: undefined; readonly confirm?: undefined } = Object.freeze({
  ticket: undefined,
  victim: undefined,
});

/** How long a model whose switch could not unload its victim is held off that router. */
export const EVICTION_HOLD_MS = 5_000;

export interface SwitchClaimsDeps {
  readonly clock: Clock;
  readonly effects: SchedulerEffects;
  readonly book: SwitchBook | undefined;
  readonly protectedModels: (() => ProtectedModels) | undefined;
  /** Unloads a victim before a switch (absent: the router picks its own). */
  readonly evict: ((node: string, victim: string, model: string) => Promise<EvictionResult>) | undefined;
  /** Requests waiting in the gateway for a model (a victim with none is chosen first). */
  readonly queued: (model: string) => number;
  /** A switch settled: the queues try again. */
  readonly changed: () => void;
  /** What the config says about who queues for a router's switches (absent: the defaults). */
  readonly switchQueue: (() => SwitchQueueConfig) | undefined;
}

type Admitted = Extract<Admission, { kind: 'admitted' }>;

export class SwitchClaims {
  readonly switches: RouterSwitches;
  /** The book the switches are kept in (the scheduler reads its `quiet` on every lease return). */
  readonly book: SwitchBook;
  /** Requests waiting inside routers that queue themselves, for a load. */
  readonly routerWaits = new RouterWaits();
  readonly #deps: SwitchClaimsDeps;

  constructor(deps: SwitchClaimsDeps) {
    this.#deps = deps;
    this.book = deps.book ?? new SwitchTickets();
    this.switches = new RouterSwitches(deps.clock, this.book);
  }

  view(node: string, switchDue: boolean, routerQueues = false, evicting?: ReadonlySet<string>): RouterSwitchView {
    const { pinned, wanted } = this.#protected();
    const busyElsewhere = this.#deps.book?.busyElsewhere?.(node);
    return {
      pending: this.switches.pending(node),
      switchDue,
      failedLoads: this.switches.failedLoads(node),
      pinned,
      wanted,
      ...(busyElsewhere === undefined || busyElsewhere.size === 0 ? {} : { busyElsewhere }),
      ...(routerQueues ? { routerQueues } : {}),
      ...(evicting === undefined || evicting.size === 0 ? {} : { evicting }),
    };
  }

  /** Who holds the requests waiting for a switch on this limited router: the router itself, or the gateway. */
  holderOf(node: NodeView): QueueHolder {
    const { pinned, wanted } = this.#protected();
    const ids = [...node.modelsById.keys()];
    const server = node.capacity.server;
    return queueHolder({
      ...(this.#deps.switchQueue?.() ?? SWITCH_QUEUE_DEFAULT),
      maxInstances: modelLimit(node),
      routerQueue: routerQueueOf(kindOfNode(node.spec.kind, server), server?.version),
      models: ids.length,
      protectedModels: ids.filter((id) => pinned.has(id) || wanted.has(id)),
    });
  }

  #protected(): ProtectedModels {
    return (this.#deps.protectedModels ?? (() => NONE_PROTECTED))();
  }

  /** A ticket when the model is not running on the node (the first load of a limited router is its switch), and the victim to unload first. */
  ticketFor(
    model: string,
    node: NodeView,
    settings: Pick<QueueSettings, 'loadTimeoutMs' | 'queueTimeoutMs' | 'swapAfterMs'>,
  ): {
    readonly ticket: LoadTicket | undefined;
    readonly victim: string | undefined;
    readonly confirm?: Promise<{ readonly ok: boolean }>;
  } {
    const { effects } = this.#deps;
    const name = node.spec.name;
    const pending = this.switches.pending(name);
    // The model runs there (nearly every request): no load to plan, so no snapshot and no switch view.
    if (!loadsModel(model, node, pending)) return NO_TICKET;
    if (pending === undefined && modelLimit(node) !== undefined && this.holderOf(node).holder === 'router')
      return this.#routerHeld(model, node, settings);
    const timeoutMs = settings.loadTimeoutMs;
    const plan = loadPlan(model, node, pending, effects.snapshot(), this.view(name, false), this.#deps.queued);
    if (!plan.loads) return NO_TICKET;
    // Without an eviction effect the router picks its own victim: none is named.
    const victim = this.#deps.evict === undefined ? undefined : plan.victim;
    const started = plan.startsSwitch && this.switches.start(name, model, victim);
    if (plan.evicts) effects.notify({ kind: 'switch', node: name, model });
    let settled = false;
    const ticket: LoadTicket = {
      timeoutMs,
      settle: (outcome) => {
        if (settled) return;
        settled = true;
        this.switches.settle(name, model, outcome, timeoutMs);
        // The listing catches up with the switch; the model's followers (or the next switch) may go.
        if (outcome === 'loaded')
          effects.refreshListings([name]).catch((error: unknown) => effects.notify({ kind: 'refresh-failed', error }));
        this.#deps.changed();
      },
    };
    const confirm = started ? this.switches.confirm(name, model) : undefined;
    return { ticket, victim: started ? victim : undefined, ...(confirm === undefined ? {} : { confirm }) };
  }

  /**
   * A load on a router that queues itself: no switch ticket and no victim (the router evicts its idle
   * LRU model, never a busy one); the request waits in the router until its answer's head, kept in
   * routerWaits for the bound. One switch is counted per model brought up on a full router.
   */
  #routerHeld(
    model: string,
    node: NodeView,
    settings: Pick<QueueSettings, 'loadTimeoutMs' | 'queueTimeoutMs' | 'swapAfterMs'>,
  ): ReturnType<SwitchClaims['ticketFor']> {
    const { effects, clock } = this.#deps;
    const boundMs = settings.swapAfterMs;
    const name = node.spec.name;
    const plan = loadPlan(model, node, undefined);
    if (plan.evicts && !this.routerWaits.waiting(name, model)) effects.notify({ kind: 'switch', node: name, model });
    // On a full router the load unloads an idle running model (its LRU pick): the ones it may pick.
    const snapshot = effects.snapshot();
    const victims = plan.evicts
      ? [...node.modelsById.values()]
          .filter((m) => m.id !== model && isRunningEntry(m) && !isLoadingEntry(m) && snapshot.usage(name, m.id).requests === 0)
          .map((m) => m.id)
      : [];
    // Full with no idle model to unload, or others queued there first: it queues in the router, and may
    // wait there as long as the gateway's own queue would let it, then for its load.
    const queues = (plan.evicts && victims.length === 0) || this.routerWaits.waitingOtherThan(name, model);
    const timeoutMs = settings.loadTimeoutMs + (queues ? settings.queueTimeoutMs : 0);
    const end = this.routerWaits.start(name, model, clock.monotonicMs(), boundMs, victims);
    let settled = false;
    const ticket: LoadTicket = {
      timeoutMs,
      settle: (outcome) => {
        if (settled) return;
        settled = true;
        end(outcome === 'loaded' ? clock.monotonicMs() : undefined);
        // As for a switch the gateway runs: a load that timed out holds the model off this router for as long.
        if (outcome === 'timed_out' && !queues) this.switches.markTimedOut(name, model, timeoutMs);
        if (outcome === 'timed_out' && queues)
          this.switches.markFailed(
            name,
            model,
            `waited in the router's queue and for its load longer than ${timeoutMs}ms (routing.queue_timeout + load_timeout); not sent here again for as long`,
            settings.loadTimeoutMs,
          );
        if (outcome === 'loaded')
          effects.refreshListings([name]).catch((error: unknown) => effects.notify({ kind: 'refresh-failed', error }));
        this.#deps.changed();
      },
    };
    return { ticket, victim: undefined };
  }

  /** [cluster]: the switch goes once claimed across replicas; a claim another replica holds sends the request to route again (it follows or waits for that switch). */
  async afterClaim(
    admitted: Admitted,
    confirm: Promise<{ readonly ok: boolean }>,
    go: () => Admission | Promise<Admission>,
    retry: () => Admission | Promise<Admission>,
  ): Promise<Admission> {
    if ((await confirm).ok) return go();
    admitted.release();
    this.#deps.changed();
    return retry();
  }

  /** The victim unloaded, the admission goes; else the model is held off the node and `retry` routes the request again. */
  async afterEviction(
    admitted: Admitted,
    victim: string,
    model: string,
    retry: () => Admission | Promise<Admission>,
  ): Promise<Admission> {
    const name = admitted.node.spec.name;
    const evict = this.#deps.evict;
    const result: EvictionResult =
      evict === undefined
        ? { ok: true }
        : await evict(name, victim, model).catch((error: unknown) => ({
            ok: false,
            reason: error instanceof Error ? error.message : String(error),
          }));
    if (result.ok) return admitted;
    this.switches.evictionFailed(
      name,
      model,
      `unloading the idle model '${victim}' first (to make room) failed: ${result.reason}; not sent here for ${EVICTION_HOLD_MS / 1000}s`,
      EVICTION_HOLD_MS,
    );
    admitted.release();
    admitted.load?.settle('failed');
    return retry();
  }
}
