// The `[[nodes]]` list as a node source: the nodes the config names, each with its whole spec.
// It changes only when a reload replaces the list (the reload builds a new one), so it never calls back.

import { CONFIG_DEFAULTS, type NodeSpec } from '#src/config/index.ts';
import type { NodeSource, SourcedNode } from './node-source.ts';

export const STATIC_SOURCE = 'static';

export class StaticSource implements NodeSource {
  readonly kind = STATIC_SOURCE;
  readonly name: string;
  readonly #specs: ReadonlyMap<string, NodeSpec>;
  readonly #nodes: readonly SourcedNode[];

  constructor(name: string, specs: readonly NodeSpec[]) {
    this.name = name;
    this.#specs = new Map(specs.map((spec) => [spec.name, spec]));
    this.#nodes = Object.freeze(
      specs.map((spec) =>
        Object.freeze({ name: spec.name, url: spec.url, kind: spec.kind, group: spec.group, labels: Object.freeze({}) }),
      ),
    );
  }

  nodes(): readonly SourcedNode[] {
    return this.#nodes;
  }

  state(): { readonly ok: true; readonly lastLookAtMs: undefined } {
    return { ok: true, lastLookAtMs: undefined };
  }

  onChange(): () => void {
    return () => {};
  }

  start(): void {}

  stop(): void {}

  lookAgain(): void {}

  /** The configured spec as written (its api key, wake, weight…); a node not of this list gets its fields only. */
  spec(node: SourcedNode): NodeSpec {
    return (
      this.#specs.get(node.name) ??
      Object.freeze({
        name: node.name,
        url: node.url,
        apiKey: undefined,
        kind: node.kind,
        group: node.group,
        kv: CONFIG_DEFAULTS.node.kv,
        weight: CONFIG_DEFAULTS.node.weight,
        wake: undefined,
        wakeTimeoutMs: CONFIG_DEFAULTS.node.wakeTimeoutMs,
      })
    );
  }
}
