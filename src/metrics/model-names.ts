// Which model names the gateway knows, for its observers: the models a node is expected to serve
// (transition logs warn when one is missing) and the bounded metric label of a requested model
// (`_unknown` for names nothing declares, lists or a fresh remote site serves, so clients cannot
// grow the label set).

import type { GatewayConfig } from '#src/config/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import type { RemoteSiteView } from '#src/routing/index.ts';
import { ModelLabels, OTHER_MODEL_LABEL } from './model-label.ts';

/** Where the node views are read (the registry itself). */
export interface NodeViews {
  views(): readonly NodeView[];
}

export class ModelNames {
  /** The config in force: told by the owner on reload (reconfigure), read as a field per request. */
  #config: GatewayConfig;
  readonly #fleet: NodeViews;
  readonly #sites: () => readonly RemoteSiteView[];
  readonly #labels: ModelLabels;
  #expected: { config: GatewayConfig | undefined; byNode: ReadonlyMap<string, readonly string[]> } = {
    config: undefined,
    byNode: new Map(),
  };
  #known: { views: unknown; ids: Set<string> } = { views: undefined, ids: new Set() };
  /** Labels of requested models listed or declared, for this config and these views: one lookup per request. */
  #requested: { config: unknown; views: unknown; labels: Map<string, string> } = {
    config: undefined,
    views: undefined,
    labels: new Map(),
  };

  constructor(config: GatewayConfig, fleet: NodeViews, sites: () => readonly RemoteSiteView[] = () => []) {
    this.#config = config;
    this.#fleet = fleet;
    this.#sites = sites;
    this.#labels = new ModelLabels({ isPinned: (model) => this.#config.models.available.some((m) => m.name === model) });
  }

  /** A reload replaced the config. */
  reconfigure(config: GatewayConfig): void {
    this.#config = config;
  }

  /** The bounded label of a model id as it is (metrics sources pass ids already known). */
  boundedLabel(model: string): string {
    return this.#labels.label(model);
  }

  /**
   * The label of a requested model: its bounded id when declared, listed or served by a fresh site, else `_unknown`.
   * Bound to this instance: the request plane calls it per request with no wrapper between.
   */
  readonly requestLabel = (model: string): string => {
    const config = this.#config;
    const views = this.#fleet.views();
    let cache = this.#requested;
    if (cache.config !== config || cache.views !== views) {
      cache = { config, views, labels: new Map() };
      this.#requested = cache;
    }
    const cached = cache.labels.get(model);
    if (cached !== undefined) return cached;
    const label = this.#labels.label(this.#isKnown(model) ? model : '_unknown');
    // Kept while config and views stand: a listed or declared model's label never changes then
    // (labels are never taken back). Not kept: `_other` (a pin a reload adds lifts it) and a model
    // known only through a remote site (its freshness is a matter of time).
    if (label !== OTHER_MODEL_LABEL && this.#known.views === views && this.#known.ids.has(model)) cache.labels.set(model, label);
    return label;
  };

  /** The declared models of the node's group. */
  expectedFor(nodeName: string): readonly string[] {
    const config = this.#config;
    // Indexed once per config: the lookup runs for every discovery result of every node.
    if (this.#expected.config !== config) {
      const byGroup = new Map<string | undefined, string[]>();
      for (const model of config.models.available) byGroup.set(model.group, [...(byGroup.get(model.group) ?? []), model.name]);
      this.#expected = { config, byNode: new Map(config.nodes.map((n) => [n.name, byGroup.get(n.group) ?? []])) };
    }
    return this.#expected.byNode.get(nodeName) ?? [];
  }

  #isKnown(model: string): boolean {
    const views = this.#fleet.views();
    if (this.#known.views !== views) {
      const ids = new Set(this.#config.models.available.map((m) => m.name));
      for (const v of views) for (const m of v.discovery.models) ids.add(m.id);
      this.#known = { views, ids };
    }
    // Forwarded to a site: the model is as real as a local one (labels stay bounded by ModelLabels).
    return this.#known.ids.has(model) || this.#sites().some((site) => site.fresh && site.models.has(model));
  }
}
