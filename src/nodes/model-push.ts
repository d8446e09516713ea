// Pushed model state: one model event stream per node whose kind pushes it in the role its capacity
// answer gave (a llama-server router's `/models/sse`); every other node opens none and costs nothing.
// Each frame, read by the kind, goes to the registry (the only writer of node state), which applies
// it through the discovery state machine the listing poll drives; the poll stays the fallback and the
// check. A (re)connect and a frame only a listing can explain (a new model, a models reload) ask the
// node's listing now (`relist`). A stream follows its node: closed when the node goes, its URL or key
// changes, or it stops answering as a router.

import { serverKind, type ModelEventsDialect } from '#src/kinds/index.ts';
import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { ExchangeDispatcher } from '#src/core/bounded-exchange.ts';
import type { NodeChange } from '#src/config/index.ts';
import { ModelEventStream, type ModelEventLimits, type StreamState } from '#src/discovery/index.ts';
import type { NodeRegistry } from './registry.ts';
import type { RegistryEvents } from './registry-events.ts';

export interface ModelPushDeps {
  readonly clock: Clock;
  readonly registry: NodeRegistry;
  readonly events: EventBus<RegistryEvents>;
  /** The streams' own connections (one per router node), never the polling agents'. */
  readonly dispatcher: ExchangeDispatcher;
  /** Lists the node's models now (`fresh`: asked after this call). */
  readonly relist: (node: string, fresh: boolean) => void;
  readonly limits?: ModelEventLimits;
}

/** One node's model event stream, as the hosts view shows it. */
export type ModelEventStreamState = StreamState;

interface Held {
  readonly stream: ModelEventStream;
  readonly url: string;
  readonly apiKey: string | undefined;
  readonly dialect: ModelEventsDialect;
}

export class ModelPush {
  readonly #deps: ModelPushDeps;
  readonly #streams = new Map<string, Held>();
  #started = false;
  #stopped = false;

  constructor(deps: ModelPushDeps) {
    this.#deps = deps;
    // A node's role is known from its capacity answer: a stream opens (or closes) as that changes.
    deps.events.on('node:capacity', ({ node }) => this.#sync(node));
    deps.events.on('node:removed', ({ node }) => this.#close(node));
  }

  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    for (const view of this.#deps.registry.views()) this.#sync(view.spec.name);
  }

  /** The node set changed: replaced and removed nodes' streams close; every node is judged again. */
  applyChange(change: NodeChange): void {
    for (const node of change.nodesRemoved) this.#close(node.name);
    for (const { next } of change.nodesReplaced) this.#close(next.name);
    for (const node of change.nodes) this.#sync(node.name);
  }

  /** Each open (or backing-off) stream's state, by node (the hosts view). */
  states(): ReadonlyMap<string, StreamState> {
    return new Map([...this.#streams].map(([name, held]) => [name, held.stream.state()]));
  }

  stop(): void {
    this.#stopped = true;
    for (const name of [...this.#streams.keys()]) this.#close(name);
  }

  #sync(name: string): void {
    if (!this.#started || this.#stopped) return;
    const view = this.#deps.registry.view(name);
    const dialect = view === undefined ? undefined : serverKind(view.spec.kind).modelEvents(view.capacity.role);
    const held = this.#streams.get(name);
    if (view === undefined || dialect === undefined) {
      if (held !== undefined) this.#close(name);
      return;
    }
    const { url, apiKey } = view.spec;
    if (held !== undefined && held.url === url && held.apiKey === apiKey && held.dialect === dialect) return;
    if (held !== undefined) this.#close(name);
    this.#open(name, url, apiKey, dialect);
  }

  #open(name: string, url: string, apiKey: string | undefined, dialect: ModelEventsDialect): void {
    const { registry, events, relist } = this.#deps;
    const stream = new ModelEventStream({
      clock: this.#deps.clock,
      dispatcher: this.#deps.dispatcher,
      url,
      path: dialect.path,
      apiKey,
      ...(this.#deps.limits === undefined ? {} : { limits: this.#deps.limits }),
      onOpen: () => {
        events.emit('node:model-events', { node: name, open: true });
        // Whatever happened while the stream was down is only in a listing.
        relist(name, true);
      },
      onFrame: (data, error) => {
        const reading = error === undefined ? dialect.read(data) : { ok: false as const, error };
        if (reading.ok === 'ignored') return;
        if (!reading.ok) {
          events.emit('node:model-events', { node: name, open: true, badFrame: reading.error });
          return;
        }
        const outcome = registry.observeModelEvent(name, url, reading.event);
        events.emit('node:model-event', { node: name, event: reading.event, applied: outcome?.kind ?? 'ignored' });
        if (outcome?.kind === 'relist') relist(name, outcome.fresh);
      },
      onStop: (stop) => events.emit('node:model-events', { node: name, open: false, stop }),
    });
    this.#streams.set(name, { stream, url, apiKey, dialect });
    stream.start();
  }

  #close(name: string): void {
    const held = this.#streams.get(name);
    if (held === undefined) return;
    this.#streams.delete(name);
    held.stream.close();
  }
}
