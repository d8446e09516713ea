// The node sources a gateway runs: the `[[nodes]]` list and each `[[node_sources]]` entry, rebuilt
// on reload (a source whose settings did not change carries on, with its last good set), started
// and stopped with the gateway. Its owner is told when the fleet changed and reads the nodes then;
// the change goes through the same path as a reload (registry, loops, planes: removed nodes drain).

import { isDeepStrictEqual } from 'node:util';
import type { Clock } from '#src/core/clock.ts';
import type { GatewayConfig, NodeSourceSpec, NodeSpec } from '#src/config/index.ts';
import { fleetNodes, type LeftOut } from './fleet-nodes.ts';
import type { NodeSource, SourceChange, SourcedNode } from './node-source.ts';
import { CHANGE_KINDS, nodeSetChange, type NodeSetChange } from './sourced-nodes.ts';
import type { DnsLookup } from './dns-records.ts';
import type { KubeApiOpener } from './k8s-api.ts';
import { NODE_SOURCES } from './node-sources.ts';
import { STATIC_SOURCE } from './static-source.ts';
import type { NodeSourceRow } from '#src/core/node-source-row.ts';

export interface NodeFleetDeps {
  readonly clock: Clock;
  readonly lookup?: DnsLookup;
  /** How Kubernetes sources reach the API; absent = the official client, loaded only when one runs. */
  readonly kubeApi?: KubeApiOpener;
  /** A source's nodes changed: read `nodes()` and apply them. */
  readonly onNodes: (source: string) => void;
  readonly log: (level: 'info' | 'warn', fields: Record<string, unknown>, message: string) => void;
  /**
   * Subscribes a listener to failed requests (the node they went to): subscribed once, when a source
   * that looks things up first runs, so a gateway without one adds nothing per request.
   */
  readonly followFailures?: (listener: (node: NodeSpec | undefined) => void) => void;
}

/** One source as /admin/hosts shows it (its left-out nodes name their source too). */
export type NodeSourceReport = NodeSourceRow & { readonly left_out: readonly LeftOut[] };

interface Running {
  readonly spec: NodeSourceSpec | undefined;
  readonly source: NodeSource;
  readonly unsubscribe: () => void;
}

export class NodeFleet {
  readonly #deps: NodeFleetDeps;
  #running: readonly Running[] = [];
  readonly #changes = new Map<string, number>();
  /** Per source: nodes added, removed and moved (a new URL under the same name) since start. */
  readonly #nodeChanges = new Map<string, NodeSetChange>();
  /** Per source: the nodes it had at its last change (what the next one is counted against). */
  readonly #seen = new Map<string, readonly SourcedNode[]>();
  #started = false;
  #stopped = false;
  #followingFailures = false;

  constructor(deps: NodeFleetDeps, config: GatewayConfig) {
    this.#deps = deps;
    this.configure(config);
  }

  /** The config's sources: the static list anew; each `[[node_sources]]` entry kept when unchanged, else rebuilt. */
  configure(config: GatewayConfig): void {
    const previous = new Map(this.#running.map((r) => [r.source.name, r]));
    const staticNodes = previous.get(STATIC_SOURCE)?.source.nodes() ?? [];
    const next: Running[] = [this.#build(undefined, config.nodes)];
    const changedStatic = !isDeepStrictEqual(
      staticNodes.map((n) => [n.name, n.url]),
      config.nodes.map((n) => [n.name, n.url]),
    );
    if (changedStatic && previous.has(STATIC_SOURCE)) this.#count(STATIC_SOURCE, next[0]!.source);
    for (const spec of config.nodeSources ?? []) {
      const kept = previous.get(spec.name);
      if (kept !== undefined && isDeepStrictEqual(kept.spec, spec)) {
        next.push(kept);
        previous.delete(spec.name);
      } else next.push(this.#build(spec, []));
    }
    const keptSources = new Set(next.map((r) => r.source));
    for (const old of this.#running) {
      if (keptSources.has(old.source)) continue;
      old.unsubscribe();
      old.source.stop();
    }
    this.#running = next;
    if (this.#started) this.#startAll();
  }

  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    this.#startAll();
  }

  stop(): void {
    this.#stopped = true;
    for (const r of this.#running) {
      r.unsubscribe();
      r.source.stop();
    }
  }

  /** Every source's nodes, the `[[nodes]]` list first. */
  nodes(): readonly NodeSpec[] {
    return fleetNodes(this.#running.map((r) => r.source)).nodes;
  }

  /** A request to `node` failed: its source (if it looks things up) looks again soon. */
  requestFailed(node: NodeSpec | undefined): void {
    if (node?.source === undefined) return;
    this.#running.find((r) => r.source.name === node.source)?.source.lookAgain();
  }

  /** Node-set changes per source since start. */
  changes(): ReadonlyMap<string, number> {
    return this.#changes;
  }

  /** Per source and kind of change (added, removed, moved), the nodes counted since start (metrics). */
  nodeChanges(): { source: string; change: (typeof CHANGE_KINDS)[number]; count: number }[] {
    return [...this.#nodeChanges].flatMap(([source, counts]) =>
      CHANGE_KINDS.map((change) => ({ source, change, count: counts[change] })),
    );
  }

  reports(): NodeSourceReport[] {
    const { leftOut } = fleetNodes(this.#running.map((r) => r.source));
    return this.#running.map(({ source }) => {
      const state = source.state();
      return {
        name: source.name,
        kind: source.kind,
        ok: state.ok,
        nodes: source.nodes().length,
        last_error: state.ok ? null : state.reason,
        failing_since: state.ok ? null : new Date(state.sinceMs).toISOString(),
        last_look_at: state.lastLookAtMs === undefined ? null : new Date(state.lastLookAtMs).toISOString(),
        changes: this.#changes.get(source.name) ?? 0,
        left_out: leftOut.filter((l) => l.source === source.name),
      };
    });
  }

  #startAll(): void {
    for (const r of this.#running) r.source.start();
    if (this.#followingFailures || this.#running.every((r) => r.spec === undefined)) return;
    this.#followingFailures = true;
    this.#deps.followFailures?.((node) => {
      if (!this.#stopped) this.requestFailed(node);
    });
  }

  #build(spec: NodeSourceSpec | undefined, nodes: readonly NodeSpec[]): Running {
    const config = spec ?? { kind: STATIC_SOURCE as 'static', name: STATIC_SOURCE, nodes };
    const factory = NODE_SOURCES[config.kind];
    if (factory === undefined)
      throw new Error(`unknown node source kind '${config.kind}' (known: ${Object.keys(NODE_SOURCES).join(', ')})`);
    const source = factory(config, {
      clock: this.#deps.clock,
      ...(this.#deps.lookup === undefined ? {} : { lookup: this.#deps.lookup }),
      ...(this.#deps.kubeApi === undefined ? {} : { kubeApi: this.#deps.kubeApi }),
    });
    this.#changes.set(source.name, this.#changes.get(source.name) ?? 0);
    this.#nodeChanges.set(source.name, this.#nodeChanges.get(source.name) ?? { added: 0, removed: 0, moved: 0 });
    // What its first change is counted against: the set the source of that name had (a rebuilt one's), else its own.
    if (!this.#seen.has(source.name)) this.#seen.set(source.name, source.nodes());
    const unsubscribe = source.onChange((what) => this.#changed(source, what));
    return { spec, source, unsubscribe };
  }

  #changed(source: NodeSource, what: SourceChange): void {
    const state = source.state();
    if (what === 'state') {
      if (state.ok) this.#deps.log('info', { source: source.name }, 'node source answers again');
      else
        this.#deps.log('warn', { source: source.name, reason: state.reason }, 'node source failed; its last good nodes are kept');
      return;
    }
    const counted = this.#count(source.name, source);
    this.#deps.log('info', { source: source.name, nodes: source.nodes().map((n) => n.name), ...counted }, 'node source changed');
    this.#deps.onNodes(source.name);
  }

  /** One change of the source's set: counted, and node by node against what it had before. */
  #count(name: string, source: NodeSource): NodeSetChange {
    this.#changes.set(name, (this.#changes.get(name) ?? 0) + 1);
    const now = source.nodes();
    const change = nodeSetChange(this.#seen.get(name) ?? [], now);
    this.#seen.set(name, now);
    const total = this.#nodeChanges.get(name) ?? { added: 0, removed: 0, moved: 0 };
    this.#nodeChanges.set(name, {
      added: total.added + change.added,
      removed: total.removed + change.removed,
      moved: total.moved + change.moved,
    });
    return change;
  }
}
