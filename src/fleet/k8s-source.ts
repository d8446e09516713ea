// A `[[node_sources]] kind = "kubernetes"` source: the ready endpoints of one Service's
// EndpointSlices, listed and then watched (k8s-follower.ts). The loop, the protocol and the client
// library are loaded when it starts, by a dynamic import: a gateway without a Kubernetes source
// loads none of them. A failure keeps the last good set and says why; a terminating or unready pod
// leaves the set (its node drains).

import type { Clock } from '#src/core/clock.ts';
import { CONFIG_DEFAULTS, type KubernetesNodeSourceSpec, type NodeSpec } from '#src/config/index.ts';
import type { KubeApiOpener } from './k8s-api.ts';
import type { KubernetesFollower } from './k8s-follower.ts';
import type { NodeSource, NodeSourceDeps, SourceChange, SourceState, SourcedNode } from './node-source.ts';
import { sameNodes } from './sourced-nodes.ts';

export class KubernetesSource implements NodeSource {
  readonly kind = 'kubernetes';
  readonly name: string;
  readonly #spec: KubernetesNodeSourceSpec;
  readonly #clock: Clock;
  readonly #open: KubeApiOpener | undefined;
  readonly #listeners = new Set<(what: SourceChange) => void>();
  #nodes: readonly SourcedNode[] = Object.freeze([]);
  #state: SourceState = { ok: true, lastLookAtMs: undefined };
  #follower: KubernetesFollower | undefined;
  #started = false;
  #stopped = false;

  constructor(spec: KubernetesNodeSourceSpec, deps: NodeSourceDeps) {
    this.name = spec.name;
    this.#spec = spec;
    this.#clock = deps.clock;
    this.#open = deps.kubeApi;
  }

  nodes(): readonly SourcedNode[] {
    return this.#nodes;
  }

  state(): SourceState {
    return this.#state;
  }

  onChange(listener: (what: SourceChange) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    void this.#begin().catch((error: unknown) => this.#failed(error instanceof Error ? error.message : String(error)));
  }

  stop(): void {
    this.#stopped = true;
    this.#follower?.stop();
    this.#listeners.clear();
  }

  /** The watch tells every change as it happens: a failed request asks nothing more of the API. */
  lookAgain(): void {}

  spec(node: SourcedNode): NodeSpec {
    return Object.freeze({
      name: node.name,
      url: node.url,
      apiKey: this.#spec.apiKey,
      kind: node.kind,
      group: node.group,
      kv: CONFIG_DEFAULTS.node.kv,
      weight: CONFIG_DEFAULTS.node.weight,
      wake: undefined,
      wakeTimeoutMs: CONFIG_DEFAULTS.node.wakeTimeoutMs,
      source: this.name,
    });
  }

  async #begin(): Promise<void> {
    const [{ KubernetesFollower }, open] = await Promise.all([
      import('./k8s-follower.ts'),
      this.#open ?? import('./k8s-client.ts').then((client) => client.openKubeApi),
    ]);
    if (this.#stopped) return;
    this.#follower = new KubernetesFollower(this.#spec, this.#clock, open, {
      nodes: (nodes) => this.#found(nodes),
      answered: () => this.#answered(),
      failed: (reason) => this.#failed(reason),
    });
    this.#follower.start();
  }

  #found(nodes: readonly SourcedNode[]): void {
    if (this.#stopped || sameNodes(nodes, this.#nodes)) return;
    this.#nodes = Object.freeze([...nodes]);
    this.#tell('nodes');
  }

  #answered(): void {
    if (this.#stopped) return;
    const turned = !this.#state.ok;
    this.#state = { ok: true, lastLookAtMs: this.#clock.now() };
    if (turned) this.#tell('state');
  }

  #failed(reason: string): void {
    if (this.#stopped) return;
    const before = this.#state;
    const now = this.#clock.now();
    const full = `${reason}; keeping the last good set`;
    this.#state = { ok: false, reason: full, sinceMs: before.ok ? now : before.sinceMs, lastLookAtMs: now };
    if (before.ok || before.reason !== full) this.#tell('state');
  }

  #tell(what: SourceChange): void {
    for (const listener of [...this.#listeners]) listener(what);
  }
}
