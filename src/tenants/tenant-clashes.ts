// Cross-entry checks of `[[tenants]]` (run by tenants-table.ts's `crossChecks` over what parsed): unique names,
// `default` kept for `[server] api_keys`, a key held by one tenant only, sites that are pinned,
// and `[[mesh.sites]] tenant` naming a tenant. A key is never written into a message: which
// tenants share it is enough to find it. Paths are from the document's root.

import type { NameClash } from '#src/config/name-clashes.ts';
import { DEFAULT_TENANT } from '#src/core/tenant-class.ts';

/** A tenant as far as it parsed: `name` undefined when it did not; `sites` undefined when not set or not a list. */
export interface TenantEntry {
  readonly name: string | undefined;
  /** Its keys that resolved (literal, env: or file:). */
  readonly keys: readonly string[];
  /** Each site id, undefined where that one did not parse. */
  readonly sites: readonly (string | undefined)[] | undefined;
}

/** What `sites` are checked against: the pinned ids, `'no-mesh'`, or `'unknown'` (a pin's id did not parse: no judgement). */
export type PinnedSites = readonly string[] | 'no-mesh' | 'unknown';

export function findTenantClashes(
  tenants: readonly TenantEntry[],
  apiKeys: readonly string[],
  hasApiKeys: boolean,
  pinned: PinnedSites,
): NameClash[] {
  const clashes: NameClash[] = [];
  const names = new Map<string, number>();
  const keyOwner = new Map<string, string>();
  for (const key of apiKeys) keyOwner.set(key, 'server.api_keys');
  tenants.forEach((tenant, index) => {
    const at = (...rest: (string | number)[]) => ['tenants', index, ...rest];
    if (tenant.name !== undefined) {
      const first = names.get(tenant.name);
      if (first !== undefined)
        clashes.push({ path: at('name'), message: `duplicate tenant name "${tenant.name}" (also tenants[${first}])` });
      else names.set(tenant.name, index);
      if (tenant.name === DEFAULT_TENANT && hasApiKeys)
        clashes.push({
          path: at('name'),
          message: `"${DEFAULT_TENANT}" is the tenant of [server] api_keys; name this one otherwise, or move those keys here`,
        });
    }
    for (const key of tenant.keys) {
      const owner = keyOwner.get(key);
      if (owner !== undefined)
        clashes.push({
          path: at('keys'),
          message: `a key of this tenant is also held by ${owner}; each key must name one tenant`,
        });
      else keyOwner.set(key, tenant.name === undefined ? `tenants[${index}]` : `tenants[${index}] ("${tenant.name}")`);
    }
    (tenant.sites ?? []).forEach((site, siteIndex) => {
      if (site === undefined || pinned === 'unknown') return;
      if (pinned === 'no-mesh')
        clashes.push({ path: at('sites', siteIndex), message: `names site "${site}" but [mesh] is not set` });
      else if (!pinned.includes(site))
        clashes.push({ path: at('sites', siteIndex), message: `site "${site}" is not pinned in [[mesh.sites]]` });
    });
  });
  return clashes;
}

/**
 * `[[mesh.sites]] tenant` must name a `[[tenants]]` entry (or `default` when `[server] api_keys`
 * holds keys). `tenantNames` undefined: some tenant's name did not parse, so nothing is judged.
 */
export function findSiteTenantClashes(
  siteTenants: readonly (string | undefined)[],
  tenantNames: readonly string[] | undefined,
  hasApiKeys: boolean,
): NameClash[] {
  if (tenantNames === undefined) return [];
  const known = new Set([...tenantNames, ...(hasApiKeys ? [DEFAULT_TENANT] : [])]);
  return siteTenants.flatMap((tenant, index) =>
    tenant === undefined || known.has(tenant)
      ? []
      : [{ path: ['mesh', 'sites', index, 'tenant'], message: `"${tenant}" is not the name of any [[tenants]] entry` }],
  );
}
