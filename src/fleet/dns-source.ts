// A `[[node_sources]] kind = "dns"` source: looks the name (or SRV record) up at start, then again
// when the answer's TTL (within bounds) or the interval runs out, and when a request to one of its
// nodes failed (no sooner than min_ttl after the last look). A failed or empty look keeps the last
// good set and says why; only a good answer that differs changes the nodes.

import type { Timer } from '#src/core/clock.ts';
import { CONFIG_DEFAULTS, type DnsNodeSourceSpec, type NodeSpec } from '#src/config/index.ts';
import { nextLookMs, nodesFromRecords, sameNodes } from './dns-answer.ts';
import { lookupDns } from './dns-lookup.ts';
import type { NodeSource, NodeSourceDeps, SourceChange, SourceState, SourcedNode } from './node-source.ts';

export class DnsSource implements NodeSource {
  readonly kind = 'dns';
  readonly name: string;
  readonly #spec: DnsNodeSourceSpec;
  readonly #deps: NodeSourceDeps;
  readonly #listeners = new Set<(what: SourceChange) => void>();
  #nodes: readonly SourcedNode[] = Object.freeze([]);
  #state: SourceState = { ok: true, lastLookAtMs: undefined };
  #failures = 0;
  #timer: Timer | undefined;
  #looking = false;
  #started = false;
  #stopped = false;
  readonly #lifetime = new AbortController();

  constructor(spec: DnsNodeSourceSpec, deps: NodeSourceDeps) {
    this.name = spec.name;
    this.#spec = spec;
    this.#deps = deps;
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
    this.#look();
  }

  stop(): void {
    this.#stopped = true;
    this.#lifetime.abort();
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#listeners.clear();
  }

  lookAgain(): void {
    if (!this.#started || this.#stopped || this.#looking) return;
    const last = this.#state.lastLookAtMs;
    if (last !== undefined && this.#deps.clock.now() - last < this.#spec.minTtlMs) return;
    this.#timer?.cancel();
    this.#look();
  }

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

  #look(): void {
    this.#looking = true;
    const lookup = this.#deps.lookup ?? lookupDns;
    lookup(this.#spec, this.#lifetime.signal)
      .catch((error: unknown) => ({ ok: false as const, reason: error instanceof Error ? error.message : String(error) }))
      .then((answer) => {
        this.#looking = false;
        if (this.#stopped) return;
        const now = this.#deps.clock.now();
        const before = this.#state;
        let changed = false;
        if (answer.ok) {
          this.#failures = 0;
          this.#state = { ok: true, lastLookAtMs: now };
          const next = nodesFromRecords(this.#spec, answer.records);
          if (!sameNodes(next, this.#nodes)) {
            this.#nodes = Object.freeze(next);
            changed = true;
          }
        } else {
          this.#failures += 1;
          const since = this.#state.ok ? now : this.#state.sinceMs;
          this.#state = { ok: false, reason: `${answer.reason}; keeping the last good set`, sinceMs: since, lastLookAtMs: now };
        }
        this.#timer = this.#deps.clock.setTimeout(() => this.#look(), nextLookMs(this.#spec, answer, this.#failures));
        const turned = before.ok !== this.#state.ok || (!before.ok && !this.#state.ok && before.reason !== this.#state.reason);
        if (turned) for (const listener of [...this.#listeners]) listener('state');
        if (changed) for (const listener of [...this.#listeners]) listener('nodes');
      });
  }
}
