// Wiring only: the model manager and the reconciler over the registry, the scheduler's queues and
// the config's desired state, with their own HTTP agent; rounds follow the node loops' rounds.

import type { Logger } from 'pino';
import { Agent } from '#src/core/undici-parts.ts';
import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { DesiredModelState, GatewayConfig } from '#src/config/index.ts';
import {
  actAsOperator,
  ModelManager,
  ModelReconciler,
  modelsView,
  nodeFacts,
  SwitchTickets,
  type ModelAction,
  type ModelActionOutcome,
  type NodeRegistry,
  type OperatorActionOptions,
  type RegistryEvents,
} from '#src/nodes/index.ts';
import type { EvictionResult, ProtectedModels, SwitchModels } from '#src/scheduler/index.ts';

export interface ModelsPartDeps {
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
}

/** Models a request never switches out (pin) and those the reconciler keeps loaded (switched out last). */
function protectedModelsOf(config: GatewayConfig): ProtectedModels {
  const pinned = new Set<string>();
  const wanted = new Set<string>();
  for (const [model, desired] of desiredOf(config)) {
    if (desired.pin) pinned.add(model);
    if (desired.warm > 0 || desired.preload) wanted.add(model);
  }
  return { pinned, wanted };
}

function desiredOf(config: GatewayConfig): Map<string, DesiredModelState> {
  const desired = new Map<string, DesiredModelState>();
  for (const model of config.models.available) if (model.desired !== undefined) desired.set(model.name, model.desired);
  return desired;
}

/** Also the model side of the scheduler's switches: the one switch book, the pins, the evictions. */
export class ModelsPart implements SwitchModels {
  readonly manager: ModelManager;
  /** The one book of model switches: the scheduler's request switches and the manager's loads and unloads. */
  readonly book = new SwitchTickets();
  readonly reconciler: ModelReconciler;
  readonly #deps: ModelsPartDeps;
  readonly #agent = new Agent({ connections: 1, pipelining: 1, keepAliveTimeout: 10_000 });
  readonly #unsubscribe: (() => void)[] = [];
  /** The protected models of the config they were read from (read per routing decision, rebuilt on reload). */
  #protected: { readonly config: GatewayConfig; readonly models: ProtectedModels } | undefined;

  constructor(deps: ModelsPartDeps) {
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
  protectedModels(): ProtectedModels {
    const config = this.#deps.config();
    if (this.#protected?.config !== config) this.#protected = { config, models: protectedModelsOf(config) };
    return this.#protected.models;
  }

  /** Unloads the idle victim of a request's switch, first (the scheduler holds the node's ticket). */
  evict(node: string, victim: string, model: string): Promise<EvictionResult> {
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
