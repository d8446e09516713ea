// Pure: which models a tenant may reach. `models` are globs over served model ids (discovery's
// matchesGlob: `*` and `?`, no regular expressions). Its `sites` scope (the remote sites its
// requests may be forwarded to) is the site choice's rule: routing's inSiteScope.

import { matchesGlob } from '#src/discovery/index.ts';
import type { TenantSpec } from '#src/tenants/tenants-config.ts';

/** Whether the tenant may use `model` (a served id, aliases resolved). */
export function allowsModel(tenant: Pick<TenantSpec, 'models'>, model: string): boolean {
  return tenant.models.some((pattern) => pattern === '*' || matchesGlob(pattern, model));
}

/** Whether every model is in scope (no filtering needed at all). */
export function allowsEveryModel(tenant: Pick<TenantSpec, 'models'>): boolean {
  return tenant.models.includes('*');
}
