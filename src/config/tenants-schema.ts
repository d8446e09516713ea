// `[[tenants]]`: who a client is (its keys), what it may reach (models, sites), its priority class
// and weight, and its limits. `[server] api_keys` keeps working as the tenant `default`, without
// limits; the top-level schema appends it (tenantsWithDefault). A key belongs to one tenant only:
// the key is the tenant's identity, so two tenants holding the same key would make limits and
// accounting a coin toss (those checks across entries are tenant-clashes.ts's).
import { z } from 'zod';
import type { EnvVars } from './api-key.ts';
import { resolveClientKeys, type SecretFileReader } from './client-keys.ts';
import { TENANT_PRIORITIES, type TenantSpec } from './types.ts';
import { defaultTenantSpec } from './tenant-types.ts';
import { name, nodeName, parsedBy, positiveUpTo, table, wholeAtLeastOne } from './schema-parts.ts';

const ONE_BILLION = 1_000_000_000;
const KEYS_ERROR = 'must be an array of keys: literal, "env:VAR" or "file:PATH" (one key per line)';

export function tenantsSchema(env: EnvVars, readFile: SecretFileReader) {
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
