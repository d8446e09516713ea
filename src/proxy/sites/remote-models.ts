// Pure: the /v1/models entries for models that only fresh remote sites serve ([mesh]). Each is
// marked with its site: `owned_by: "switchyard:<site>"` (the first site by id) and a `switchyard`
// object naming every fresh site that lists it. Models served locally keep their local entry. A
// tenant is shown only the sites its `sites` scope allows.

import type { MeshLink } from '#src/mesh/forwarding/index.ts';
import type { RemoteSiteView } from '#src/routing/index.ts';
import type { FleetModel } from '../request/models-list.ts';

export interface RemoteFleetModel extends FleetModel {
  readonly switchyard: { readonly site: string; readonly sites: readonly string[] };
}

/** `allowed`: the sites the asking tenant may be forwarded to (its `sites` scope); absent = every one. */
export function remoteModelList(
  sites: readonly RemoteSiteView[],
  self: string,
  local: readonly { readonly id: string }[],
  nowMs: number,
  allowed: (siteId: string) => boolean = () => true,
): RemoteFleetModel[] {
  const localIds = new Set(local.map((m) => m.id));
  const byModel = new Map<string, { sites: string[]; ctx: number; ready: boolean }>();
  const fresh = sites
    .filter((s) => s.fresh && s.id !== self && allowed(s.id))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const site of fresh) {
    for (const [id, model] of site.models) {
      if (localIds.has(id)) continue;
      const entry = byModel.get(id) ?? { sites: [], ctx: 0, ready: false };
      entry.sites.push(site.id);
      entry.ctx = Math.max(entry.ctx, model.ctx ?? 0);
      entry.ready ||= !model.onDemand;
      byModel.set(id, entry);
    }
  }
  const created = Math.floor(nowMs / 1000);
  return [...byModel.keys()].sort().map((id): RemoteFleetModel => {
    const entry = byModel.get(id) ?? { sites: [], ctx: 0, ready: false };
    const site = entry.sites[0] ?? '';
    return {
      id,
      object: 'model',
      created,
      owned_by: `switchyard:${site}`,
      max_model_len: entry.ctx > 0 ? entry.ctx : null,
      loaded: entry.ready,
      nodes: [],
      on_demand_nodes: [],
      switchyard: { site, sites: entry.sites },
    };
  });
}

export function freshRemoteModelList(
  mesh: MeshLink,
  local: readonly { readonly id: string }[],
  nowMs: number,
  allowed?: (siteId: string) => boolean,
): RemoteFleetModel[] {
  return remoteModelList(mesh.source.sites(), mesh.site, local, nowMs, allowed);
}
