// `[[tenants]]`, the tenants' config table (config/config-table.ts): who a client is (its keys), what
// it may reach (models, sites), its priority class and weight, and its limits. `[server] api_keys`
// keeps working as the tenant `default`, without limits (`complete` appends it). A key belongs to
// one tenant only: the key is the tenant's identity, so two tenants holding the same key would make
// limits and accounting a coin toss (those checks across entries are tenant-clashes.ts's).
// Imports zod and config/ only: check-config reads it without the tenants' runtime.
import { z } from 'zod';
import { resolveApiKey, type EnvVars } from '#src/config/api-key.ts';
import type { ConfigTable, TableSecrets } from '#src/config/config-table.ts';
import { plural } from '#src/config/plural.ts';
import { entriesOf, fieldOf, parsed, tableOf, wellFormedList, type RawTable } from '#src/config/raw-document.ts';
import { name, nodeName, parsedBy, positiveUpTo, table, wholeAtLeastOne } from '#src/config/schema-parts.ts';
import { TENANT_PRIORITIES } from '#src/core/tenant-class.ts';
import { resolveClientKeys } from './client-keys.ts';
import { findSiteTenantClashes, findTenantClashes, type PinnedSites, type TenantEntry } from './tenant-clashes.ts';
import { defaultTenantSpec, type TenantSpec } from './tenants-config.ts';

const ONE_BILLION = 1_000_000_000;
const KEYS_ERROR = 'must be an array of keys: literal, "env:VAR" or "file:PATH" (one key per line)';

export function tenantsSchema({ env, readFile }: TableSecrets) {
  const keyEntry = z.string({ error: KEYS_ERROR }).pipe(parsedBy((value: string) => resolveClientKeys(value, env, readFile)));
  const tenantSchema = table({
    name: nodeName,
    keys: z
      .array(keyEntry, { error: KEYS_ERROR })
      .min(1, { error: 'must hold at least one key: a tenant without a key cannot be reached' }),
    models: z
      .array(name, { error: 'must be an array of model ids or patterns, like ["llama-*"]' })
      .min(1, { error: 'must list at least one model id or pattern; leave it out to allow every model' })
      .default(['*']),
    sites: z.array(name, { error: 'must be an array of site ids ([] = this site only)' }).optional(),
    priority: z.enum(TENANT_PRIORITIES, { error: `must be one of: ${TENANT_PRIORITIES.join(', ')}` }).default('standard'),
    weight: positiveUpTo(1_000_000).default(1),
    max_concurrent: wholeAtLeastOne.optional(),
    requests_per_minute: wholeAtLeastOne.max(ONE_BILLION, { error: `must be at most ${ONE_BILLION}` }).optional(),
    tokens_per_minute: wholeAtLeastOne.max(ONE_BILLION, { error: `must be at most ${ONE_BILLION}` }).optional(),
    tokens_per_day: wholeAtLeastOne.max(1_000 * ONE_BILLION, { error: `must be at most ${1_000 * ONE_BILLION}` }).optional(),
  }).transform((tenant): TenantSpec => ({
    name: tenant.name,
    keys: tenant.keys.flat(),
    models: tenant.models,
    sites: tenant.sites,
    priority: tenant.priority,
    weight: tenant.weight,
    maxConcurrent: tenant.max_concurrent,
    requestsPerMinute: tenant.requests_per_minute,
    tokensPerMinute: tenant.tokens_per_minute,
    tokensPerDay: tenant.tokens_per_day,
  }));
  return z.array(tenantSchema, { error: 'must be an array of tables, written [[tenants]]' }).default([]);
}

/** `[[tenants]]` then `default` holding `[server] api_keys` (when there are any), as GatewayConfig.tenants lists them. */
export function tenantsWithDefault(tenants: readonly TenantSpec[], apiKeys: readonly string[]): readonly TenantSpec[] {
  if (apiKeys.length === 0) return tenants;
  return [...tenants, defaultTenantSpec(apiKeys)];
}

export const tenantsTable = Object.freeze<ConfigTable<'tenants'>>({
  name: 'tenants',
  schema: tenantsSchema,
  complete: (tenants, config) => tenantsWithDefault(tenants, config.server.apiKeys),
  crossChecks: (doc, { env, readFile }) => tenantClashes(doc, env, readFile),
  summary: (config) => describeTenants(config.tenants),
});

/** The tenants' entries against each other, `[server] api_keys` and the sites pinned in `[[mesh.sites]]` (read as written). */
function tenantClashes(doc: RawTable, env: EnvVars, readFile: TableSecrets['readFile']) {
  const server = tableOf(doc['server']) ?? {};
  const rawApiKeys = Array.isArray(server['api_keys']) ? server['api_keys'] : [];
  const apiKeys = rawApiKeys.flatMap((key) => {
    const resolved = typeof key === 'string' ? resolveApiKey(key, env) : undefined;
    return resolved?.ok === true ? [resolved.value] : [];
  });
  const hasApiKeys = rawApiKeys.length > 0;
  const tenants: TenantEntry[] = entriesOf(doc['tenants']).map((tenant) => ({
    name: fieldOf(tenant, 'name', nodeName),
    keys: entriesOf(tenant['keys'], (key) => {
      const resolved = typeof key === 'string' ? resolveClientKeys(key, env, readFile) : undefined;
      return resolved?.ok === true ? resolved.value : [];
    }).flat(),
    sites: Array.isArray(tenant['sites']) ? tenant['sites'].map((site) => parsed(name, site)) : undefined,
  }));
  const mesh = tableOf(doc['mesh']);
  const pins = entriesOf(mesh?.['sites']);
  // A pinned site's id follows the node-name rule (the mesh's own rule for a site id).
  const pinIds = pins.map((pin) => fieldOf(pin, 'id', nodeName));
  const pinned: PinnedSites =
    doc['mesh'] === undefined
      ? 'no-mesh'
      : mesh === undefined || !wellFormedList(mesh['sites']) || pinIds.includes(undefined)
        ? 'unknown'
        : pinIds.filter((id) => id !== undefined);
  const names = tenants.map((tenant) => tenant.name);
  const allNamed = wellFormedList(doc['tenants']) && !names.includes(undefined);
  return [
    ...findTenantClashes(tenants, apiKeys, hasApiKeys, pinned),
    ...findSiteTenantClashes(
      pins.map((pin) => fieldOf(pin, 'tenant', name)),
      allNamed ? names.filter((n) => n !== undefined) : undefined,
      hasApiKeys,
    ),
  ];
}

function describeTenants(tenants: readonly TenantSpec[]): string[] {
  if (tenants.length === 0) return ['tenants: none (no client key asked: every request is the tenant default, without limits)'];
  return [`tenants (${tenants.length}):`, ...tenants.map((tenant) => `  ${describeTenant(tenant)}`)];
}

function describeTenant(tenant: TenantSpec): string {
  const limits = [
    tenant.maxConcurrent === undefined ? '' : `${tenant.maxConcurrent} at once`,
    tenant.requestsPerMinute === undefined ? '' : `${tenant.requestsPerMinute} requests/min`,
    tenant.tokensPerMinute === undefined ? '' : `${tenant.tokensPerMinute} tokens/min`,
    tenant.tokensPerDay === undefined ? '' : `${tenant.tokensPerDay} tokens/day`,
  ].filter((limit) => limit !== '');
  const models = tenant.models.length === 1 && tenant.models[0] === '*' ? 'every model' : `models ${tenant.models.join(', ')}`;
  const sites =
    tenant.sites === undefined ? '' : tenant.sites.length === 0 ? ', this site only' : `, sites ${tenant.sites.join(', ')}`;
  return (
    `${tenant.name}  ${plural(tenant.keys.length, 'key')}, ${tenant.priority} (weight ${tenant.weight}), ${models}${sites}; ` +
    `limits: ${limits.length === 0 ? 'none' : limits.join(', ')}`
  );
}
