// A worker's copy of the remote sites ([mesh] with `[server] workers` > 1): the owner's MeshPart
// holds the site store and pushes its views whenever they change (freshness included), as it does
// the fleet. The views cross as plain data (their model Maps as entry lists), and the worker's
// forwarding and /v1/models read them through the same SitesSource the owner's request path uses.

import type { SitesSource } from '../forwarding/index.ts';
import type { RemoteModel, RemoteSiteView } from '#src/routing/index.ts';

/** One remote site as it crosses the MessagePort. */
export interface SiteWire {
  readonly id: string;
  readonly url: string | undefined;
  readonly fresh: boolean;
  /** Stale but remembered (its models are unavailable, not unknown). */
  readonly remembered: boolean;
  readonly load: number;
  readonly models: readonly (readonly [model: string, ctx: number | undefined, onDemand: boolean])[];
}

export function sitesToWire(sites: readonly RemoteSiteView[]): SiteWire[] {
  return sites.map((s) => ({
    id: s.id,
    url: s.url,
    fresh: s.fresh,
    remembered: s.remembered === true,
    load: s.load,
    models: [...s.models].map(([model, m]) => [model, m.ctx, m.onDemand] as const),
  }));
}

export function sitesFromWire(wire: readonly SiteWire[]): RemoteSiteView[] {
  return wire.map((s) => {
    const view = {
      id: s.id,
      url: s.url,
      fresh: s.fresh,
      load: s.load,
      models: new Map<string, RemoteModel>(s.models.map(([model, ctx, onDemand]) => [model, { ctx, onDemand }])),
    };
    return s.remembered && !s.fresh ? { ...view, remembered: true } : view;
  });
}

/** A stable text of the views, to push only when something a worker reads has changed. */
export function sitesSignature(wire: readonly SiteWire[]): string {
  return JSON.stringify(wire);
}

export class SiteMirror implements SitesSource {
  #sites: readonly RemoteSiteView[];

  constructor(wire: readonly SiteWire[]) {
    this.#sites = sitesFromWire(wire);
  }

  update(wire: readonly SiteWire[]): void {
    this.#sites = sitesFromWire(wire);
  }

  sites(): readonly RemoteSiteView[] {
    return this.#sites;
  }
}
