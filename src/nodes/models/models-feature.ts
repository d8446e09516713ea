// The model management feature, wiring only: the model manager and the reconciler over the
// registry, the scheduler's queues and the config's desired state (desired-models.ts), with their
// own HTTP agent; rounds follow the node loops' rounds. It is the model side of the scheduler's
// switches (the one switch book, the pins, the evictions) and the admin API's /admin/models*.

import type { Logger } from 'pino';
import { Agent } from '#src/core/undici-parts.ts';
import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { Feature } from '#src/core/feature.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import type { ModelAction } from '#src/kinds/index.ts';
import type { NodeRegistry } from '../registry.ts';
import type { RegistryEvents } from '../registry-events.ts';
import { ModelManager, type ModelActionOutcome } from './model-manager.ts';
import { ModelReconciler } from './reconciler.ts';
import { actAsOperator, type OperatorActionOptions } from './operator-action.ts';
import { nodeFacts } from './model-facts.ts';
import { modelsView, type RouterHeldLoad } from './models-view.ts';
import { SwitchTickets } from './switch-book.ts';
import { desiredOf, protectedModelsOf, type ProtectedModelNames } from './desired-models.ts';

export interface ModelsFeatureDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly config: () => GatewayConfig;
  readonly registry: Pick<NodeRegistry, 'freshViews' | 'snapshot'>;
  readonly queueDepths: () => Readonly<Record<string, number>>;
  readonly events: EventBus<RegistryEvents>;
  /** Listings of these nodes asked now (no cool-down); settles once they are applied. */
  readonly refresh: (nodes: readonly string[]) => Promise<unknown>;
  /** An operation gave its switch ticket back: the scheduler's queues may go on. */
  readonly switchEnded: () => void;
  /** The loads routers that queue themselves hold the gateway's requests for, by node (the scheduler's); absent = none shown. */
  readonly routerLoads?: () => ReadonlyMap<string, readonly RouterHeldLoad[]>;
}

/** What model management adds to the owner's parts (gateway/features.ts names them). */
export interface ModelsParts {
  /** The scheduler's model side of switches (scheduler.ts, SwitchModels). */
  readonly switchModels: ModelsFeature;
  /** /admin/models*. */
  readonly modelCommands: ModelsFeature;
}

/** Also the model side of the scheduler's switches: the one switch book, the pins, the evictions. */
export class ModelsFeature implements Feature<GatewayConfig, ModelsParts> {
  readonly name = 'models';
  readonly parts: ModelsParts = { switchModels: this, modelCommands: this };
  readonly manager: ModelManager;
  /** The one book of model switches: the scheduler's request switches and the manager's loads and unloads. */
  readonly book = new SwitchTickets();
  readonly reconciler: ModelReconciler;
  readonly #deps: ModelsFeatureDeps;
  readonly #agent = new Agent({ connections: 1, pipelining: 1, keepAliveTimeout: 10_000 });
  readonly #unsubscribe: (() => void)[] = [];
  /** The protected models of the config they were read from (read per routing decision, rebuilt on reload). */
  readonly #protected = new WeakMap<GatewayConfig, ProtectedModelNames>();

  constructor(deps: ModelsFeatureDeps) {
    this.#deps = deps;
    const queued = (model: string): number => deps.queueDepths()[model] ?? 0;
    const pinned = (model: string): boolean => desiredOf(deps.config()).get(model)?.pin === true;
    const inFlight = (node: string, model: string): number => deps.registry.snapshot().usage(node, model).requests;
    this.manager = new ModelManager({
      clock: deps.clock,
      dispatcher: this.#agent,
      logger: deps.logger,
      views: () => deps.registry.freshViews(),
      inFlight,
      queued,
      pinned,
      loadTimeoutMs: () => deps.config().routing.loadTimeoutMs,
      refresh: deps.refresh,
      book: this.book,
      switchEnded: deps.switchEnded,
    });
    this.reconciler = new ModelReconciler({
      manager: this.manager,
      facts: () => this.#facts(),
      desired: () => [...desiredOf(deps.config())].map(([model, desired]) => ({ model, desired })),
      warmExcluded: (node) => deps.config().nodes.find((n) => n.name === node)?.warm === false,
      queued,
      pinned,
      onError: (error) => deps.logger.error({ err: error }, 'model reconcile round failed'),
      now: () => deps.clock.now(),
      monotonicMs: () => deps.clock.monotonicMs(),
      holdMs: () => deps.config().models.operatorHoldMs,
    });
  }

  #facts(): ReturnType<typeof nodeFacts>[] {
    const snapshot = this.#deps.registry.snapshot();
    return this.#deps.registry
      .freshViews()
      .map((view) => nodeFacts(view, (node, model) => snapshot.usage(node, model).requests, this.manager.busy(view.spec.name)));
  }

  /** Rounds start once the loops run: after each node's poll and each health change. */
  start(): void {
    const poke = (): void => this.reconciler.poke();
    this.#unsubscribe.push(
      this.#deps.events.on('node:capacity', poke),
      this.#deps.events.on('node:health-changed', poke),
      this.#deps.events.on('node:discovery', poke),
    );
  }

  /** Pins and wanted models of the config in force (the router-room filter's view). */
  protectedModels(): ProtectedModelNames {
    const config = this.#deps.config();
    const known = this.#protected.get(config);
    if (known !== undefined) return known;
    const models = protectedModelsOf(config);
    this.#protected.set(config, models);
    return models;
  }

  /** Unloads the idle victim of a request's switch, first (the scheduler holds the node's ticket). */
  evict(node: string, victim: string, model: string): ReturnType<ModelManager['evictFor']> {
    return this.manager.evictFor(node, victim, model);
  }

  /** An operator's load or unload (the admin API): the reconciler has its say, and the action holds (nodes/models/operator-action.ts). */
  act(
    action: ModelAction,
    model: string,
    node: string | undefined,
    options: OperatorActionOptions = {},
  ): Promise<ModelActionOutcome> {
    const kept = (m: string): boolean => this.protectedModels().wanted.has(m);
    return actAsOperator(
      { manager: this.manager, reconciler: this.reconciler, kept, now: () => this.#deps.clock.now() },
      action,
      model,
      node,
      options,
    );
  }

  view(): unknown {
    return modelsView({
      nodes: this.#facts(),
      desired: desiredOf(this.#deps.config()),
      failures: this.manager.failures(),
      nowMs: this.#deps.clock.monotonicMs(),
      plan: this.reconciler.plan(),
      switches: this.book.held(),
      ...(this.#deps.routerLoads === undefined ? {} : { routerLoads: this.#deps.routerLoads() }),
      holds: this.reconciler.holds(),
      epochMs: this.#deps.clock.now(),
      reconciler: this.reconciler.status(),
    });
  }

  async stop(): Promise<void> {
    this.reconciler.stop();
    for (const off of this.#unsubscribe.splice(0)) off();
    await this.#agent.destroy();
  }
}
