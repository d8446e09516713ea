// Pure: which remote site takes a request no local node could serve, and why every other pinned
// site did not. Remote sites run through the same kind of filter pipeline as nodes — each
// exclusion carries a reason — then the lowest load wins, on-demand copies rank after ready ones,
// and ties rotate by an injected turn (the caller's counter; no module state).

import { neededTokens } from '../route-request.ts';
import type { RemoteSiteView, SiteExclusion } from './remote-site.ts';

export interface SiteRequest {
  readonly model: string;
  readonly promptTokens: number | undefined;
  readonly maxTokens: number | undefined;
  /** Sites already tried for this request (failover never returns to one). */
  readonly triedSites: ReadonlySet<string>;
  /** The request was itself forwarded by another site: local nodes only (one hop). */
  readonly forwarded: boolean;
  /**
   * The remote sites its tenant may be forwarded to (`[[tenants]] sites`): undefined = every one
   * (fresh, as always); [] = none, local nodes only. Absent = undefined.
   */
  readonly scope?: readonly string[] | undefined;
}

export interface SiteChoice {
  /** The site to forward to, or undefined when none is eligible. */
  readonly chosen: RemoteSiteView | undefined;
  /** Every other site, with why it was not chosen (eligible ones that lost the ranking are not listed). */
  readonly excluded: readonly SiteExclusion[];
  /** Sites eligible besides the chosen one: failover candidates. */
  readonly alternatives: number;
}

/** The tokens a request needs, in the same sense as a node's context check. */
export function siteNeed(req: SiteRequest): number {
  return neededTokens(req);
}

/** Whether a tenant's site scope (`[[tenants]] sites`; undefined = every site) lets its requests go to `siteId`. */
export function inSiteScope(scope: readonly string[] | undefined, siteId: string): boolean {
  return scope === undefined || scope.includes(siteId);
}

/** Why one site cannot take the request, or undefined when it can. */
export function siteExclusion(
  req: SiteRequest,
  site: RemoteSiteView,
  unreachable: ReadonlyMap<string, string>,
): SiteExclusion | undefined {
  if (req.forwarded) return { site: site.id, code: 'forwarded', detail: 'the request was forwarded here: local nodes only' };
  if (req.scope !== undefined && !inSiteScope(req.scope, site.id))
    return { site: site.id, code: 'not_in_tenant_scope', detail: scopeDetail(req.scope) };
  if (req.triedSites.has(site.id)) return { site: site.id, code: 'already_tried' };
  if (!site.fresh || site.url === undefined) {
    if (site.url === undefined) return { site: site.id, code: 'stale', detail: 'no record yet' };
    const listed = site.remembered === true && site.models.has(req.model);
    return {
      site: site.id,
      code: 'stale',
      detail: `no fresh record within the freshness window${listed ? '; its last record listed this model' : ''}`,
    };
  }
  const model = site.models.get(req.model);
  if (model === undefined) return { site: site.id, code: 'missing' };
  const need = siteNeed(req);
  if (model.ctx !== undefined && model.ctx < need)
    return { site: site.id, code: 'too_small', detail: `ctx ${model.ctx} < ${need} needed` };
  const down = unreachable.get(site.id);
  if (down !== undefined) return { site: site.id, code: 'unreachable', detail: down };
  return undefined;
}

function scopeDetail(scope: readonly string[]): string {
  if (scope.length === 0) return "the tenant's requests stay on this site (its sites = [])";
  return `the tenant may be forwarded to ${scope.map((id) => `'${id}'`).join(', ')} only`;
}

/**
 * Chooses among `sites` (the caller leaves this site out). `unreachable` maps a site to why it is
 * in back-off; `turn` breaks ties between equally loaded sites (round-robin when it counts up).
 */
export function chooseSite(
  req: SiteRequest,
  sites: readonly RemoteSiteView[],
  unreachable: ReadonlyMap<string, string>,
  turn: number,
): SiteChoice {
  const excluded: SiteExclusion[] = [];
  const eligible: RemoteSiteView[] = [];
  for (const site of sites) {
    const exclusion = siteExclusion(req, site, unreachable);
    if (exclusion === undefined) eligible.push(site);
    else excluded.push(exclusion);
  }
  if (eligible.length === 0) return { chosen: undefined, excluded, alternatives: 0 };
  const rank = (site: RemoteSiteView): number => (site.models.get(req.model)?.onDemand === true ? 1 : 0);
  const bestRank = Math.min(...eligible.map(rank));
  const ready = eligible.filter((s) => rank(s) === bestRank);
  const lowest = Math.min(...ready.map((s) => s.load));
  // Sorted by id so the rotation does not depend on the order the store lists sites in.
  const tied = ready.filter((s) => s.load === lowest).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const chosen = tied[((turn % tied.length) + tied.length) % tied.length];
  return { chosen, excluded, alternatives: eligible.length - 1 };
}

/**
 * Models a remote site lists now or listed lately (fresh, or stale but remembered): for the
 * unknown-model rule, such a model is unavailable (503), never unknown (404).
 */
export function knownRemoteModels(sites: readonly RemoteSiteView[]): Set<string> {
  const models = new Set<string>();
  for (const site of sites) if (site.fresh || site.remembered === true) for (const id of site.models.keys()) models.add(id);
  return models;
}
