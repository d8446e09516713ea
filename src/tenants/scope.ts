// Pure: what a tenant may reach. `models` are globs over served model ids (discovery's
// matchesGlob: `*` and `?`, no regular expressions); `sites` names the remote sites its requests
// may be forwarded to (undefined = every fresh one, [] = this site only).

import { matchesGlob } from '#src/discovery/index.ts';
import type { TenantSpec } from '#src/config/index.ts';

/** Whether the tenant may use `model` (a served id, aliases resolved). */
export function allowsModel(tenant: Pick<TenantSpec, 'models'>, model: string): boolean {
  return tenant.models.some((pattern) => pattern === '*' || matchesGlob(pattern, model));
}

/** Whether every model is in scope (no filtering needed at all). */
export function allowsEveryModel(tenant: Pick<TenantSpec, 'models'>): boolean {
  return tenant.models.includes('*');
}

/** Whether the tenant's requests may be forwarded to `siteId`. */
export function allowsSite(tenant: Pick<TenantSpec, 'sites'>, siteId: string): boolean {
  return tenant.sites === undefined || tenant.sites.includes(siteId);
}
