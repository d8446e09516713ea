// Where a site's own model set comes from. Each source answers the models it sees now, or
// "unknown" when it cannot tell (the site then keeps that source's last-known-good list, so a bad
// answer never clears the set). A Kubernetes/KServe source would be one more module and one more
// registry entry.

import type { MeshStaticModel } from '#src/mesh/config/mesh-config.ts';
import type { NodeView } from '#src/nodes/index.ts';
import type { SiteRecordModel } from './site-record.ts';
import { nodeListingModels } from './sources/node-listing.ts';
import { staticModels } from './sources/static.ts';

export type SourceModels =
  { readonly kind: 'list'; readonly models: readonly SiteRecordModel[] } | { readonly kind: 'unknown'; readonly reason: string };

export interface DiscoverySource {
  readonly name: string;
  /** What the source sees at `now` (epoch ms); must not do I/O (sources read state others keep). */
  models(now: number): SourceModels;
}

/** What the built-in sources read. */
export interface SourceDeps {
  readonly nodeViews: () => readonly NodeView[];
  readonly staticModels: () => readonly MeshStaticModel[];
}

export type SourceFactory = (deps: SourceDeps) => DiscoverySource;

/** Every source by name. */
export const DISCOVERY_SOURCES: Readonly<Record<string, SourceFactory>> = Object.freeze({
  'node-listing': (deps) => ({ name: 'node-listing', models: (now) => nodeListingModels(deps.nodeViews(), now) }),
  static: (deps) => ({ name: 'static', models: () => staticModels(deps.staticModels()) }),
});

/** The sources a site runs, in merge order. */
export function siteSources(deps: SourceDeps, names: readonly string[] = Object.keys(DISCOVERY_SOURCES)): DiscoverySource[] {
  return names.map((name) => {
    const factory = DISCOVERY_SOURCES[name];
    if (factory === undefined)
      throw new Error(`unknown discovery source '${name}' (known: ${Object.keys(DISCOVERY_SOURCES).join(', ')})`);
    return factory(deps);
  });
}
