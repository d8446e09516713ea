// The checks that compare entries or sections — unique names, references from one section to
// another, one key per tenant, listeners apart, freshness beyond the heartbeat — run over the
// document as written, beside the schema (load.ts), so that one run reports every problem: a typo
// in one node does not hide a duplicate name in another. Each check reads a field only through the
// schema's own rule for it, and judges as far as what parsed lets it: where its answer would hang
// on a field that did not parse, it says nothing (that field's own problem is reported already).
// Key files may be read again here; only whether two keys are equal is used, never the key.

import type { z } from 'zod';
import { resolveApiKey, type EnvVars } from './api-key.ts';
import { resolveClientKeys, type SecretFileReader } from './client-keys.ts';
import { CONFIG_DEFAULTS } from './defaults.ts';
import { formatKeyPath } from './key-path.ts';
import { parseListenAddress } from './listen-address.ts';
import { parsePeerId } from './mesh-addresses.ts';
import { pinnedKeyText, siteId } from './mesh-schema.ts';
import {
  findModelNameClashes,
  findNodeNameClashes,
  findRepeats,
  findUnservedModelGroups,
  isDeclaredModel,
  type NameClash,
} from './name-clashes.ts';
import { name, nodeName, positiveDurationMs } from './schema-parts.ts';
import { findSiteTenantClashes, findTenantClashes, type PinnedSites, type TenantEntry } from './tenant-clashes.ts';
import type { ConfigProblem } from './types.ts';

type Raw = Readonly<Record<string, unknown>>;

export function crossCheckProblems(document: unknown, env: EnvVars, readFile: SecretFileReader): ConfigProblem[] {
  const doc = tableOf(document) ?? {};
  const clashes = [
    ...modelAndNodeClashes(doc),
    ...listenerClashes(doc),
    ...tenantClashes(doc, env, readFile),
    ...meshClashes(doc),
  ];
  return clashes.map((clash) => ({ path: formatKeyPath(clash.path), message: clash.message }));
}

function modelAndNodeClashes(doc: Raw): NameClash[] {
  const nodes = entriesOf(doc['nodes']);
  const models = tableOf(doc['models']) ?? {};
  const available = entriesOf(models['available']);
  const modelNames = available.map((model) => ({
    name: fieldOf(model, 'name', name) ?? '',
    aliases: entriesOf(model['aliases'], (alias) => parsed(name, alias) ?? ''),
  }));
  const clashes = [
    ...under(['nodes'], findNodeNameClashes(nodes.map((node) => ({ name: fieldOf(node, 'name', nodeName) ?? '' })))),
    ...under(['models', 'available'], findModelNameClashes(modelNames)),
  ];
  // Whether the default names a model, and whether a group is served, hang on every entry's field.
  const defaultModel = fieldOf(models, 'default', name);
  const allNamed = available.every((model, i) => modelNames[i]?.name !== '' && wellFormed(model['aliases'], name));
  if (defaultModel !== undefined && allNamed && !isDeclaredModel(defaultModel, modelNames))
    clashes.push({
      path: ['models', 'default'],
      message: `"${defaultModel}" is not the name or alias of any [[models.available]] entry`,
    });
  // A [[node_sources]] entry's group serves models as a [[nodes]] entry's does.
  const nodeGroups = nodeGroupsOf(doc['nodes']);
  const sourceGroups = nodeGroupsOf(doc['node_sources']);
  const groups = nodeGroups === undefined || sourceGroups === undefined ? undefined : [...nodeGroups, ...sourceGroups];
  if (groups !== undefined) {
    const modelGroups = available.map((model) => ({ group: fieldOf(model, 'group', name) }));
    clashes.push(...under(['models', 'available'], findUnservedModelGroups(modelGroups, groups)));
  }
  return clashes;
}

function listenerClashes(doc: Raw): NameClash[] {
  const admin = tableOf(doc['admin']);
  const server = tableOf(doc['server']) ?? {};
  const adminText = admin?.['listen'];
  if (typeof adminText !== 'string') return [];
  const adminAt = parseListenAddress(adminText);
  const serverText = server['listen'];
  const main = serverText === undefined ? { ok: true as const, value: CONFIG_DEFAULTS.server.listen } : null;
  const serverAt = main ?? (typeof serverText === 'string' ? parseListenAddress(serverText) : undefined);
  if (!adminAt.ok || serverAt === undefined || !serverAt.ok) return [];
  const a = adminAt.value;
  const s = serverAt.value;
  if (a.port === 0 || a.port !== s.port || a.host !== s.host) return [];
  return [
    {
      path: ['admin', 'listen'],
      message: 'must differ from server.listen (or leave it out to serve admin on the main listener)',
    },
  ];
}

function tenantClashes(doc: Raw, env: EnvVars, readFile: SecretFileReader): NameClash[] {
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
  const pinIds = pins.map((pin) => fieldOf(pin, 'id', siteId));
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

function meshClashes(doc: Raw): NameClash[] {
  const mesh = tableOf(doc['mesh']);
  if (mesh === undefined) return [];
  const clashes: NameClash[] = [];
  const heartbeat =
    mesh['heartbeat'] === undefined ? CONFIG_DEFAULTS.mesh.heartbeatMs : parsed(positiveDurationMs, mesh['heartbeat']);
  const freshness = mesh['freshness'] === undefined ? undefined : parsed(positiveDurationMs, mesh['freshness']);
  if (heartbeat !== undefined && (mesh['freshness'] === undefined || freshness !== undefined)) {
    if ((freshness ?? heartbeat * CONFIG_DEFAULTS.mesh.freshnessHeartbeats) <= heartbeat)
      clashes.push({
        path: ['mesh', 'freshness'],
        message: 'must be longer than heartbeat, or every site would turn stale between two heartbeats (default: 3 × heartbeat)',
      });
  }
  const pins = entriesOf(mesh['sites']);
  clashes.push(
    ...under(
      ['mesh', 'sites'],
      findRepeats(
        pins.map((pin) => fieldOf(pin, 'id', siteId)),
        'id',
        (id) => `site "${id}" is pinned twice; each site has one key`,
      ),
    ),
    ...under(
      ['mesh', 'sites'],
      findRepeats(
        pins.map((pin) => fieldOf(pin, 'public_key', pinnedKeyText)),
        'public_key',
        () => 'the same key is pinned for two sites; each site must have its own key, or one could speak for the other',
      ),
    ),
    ...under(
      ['mesh', 'allowed_peers'],
      findRepeats(
        entriesOf(mesh['allowed_peers'], (peer) => {
          const id = typeof peer === 'string' ? parsePeerId(peer) : undefined;
          return id?.ok === true ? id.value : undefined;
        }),
        undefined,
        (id) => `peer ${id} is listed twice`,
      ),
    ),
    ...under(
      ['mesh', 'static_models'],
      findRepeats(
        entriesOf(mesh['static_models']).map((model) => fieldOf(model, 'id', name)),
        'id',
        (id) => `model "${id}" is listed twice`,
      ),
    ),
  );
  return clashes;
}

/** Every node's group (undefined: none), or undefined when one cannot be told (a group or a node that did not parse). */
function nodeGroupsOf(nodes: unknown): { group: string | undefined }[] | undefined {
  if (nodes === undefined) return [];
  if (!Array.isArray(nodes)) return undefined;
  const groups: { group: string | undefined }[] = [];
  for (const node of nodes) {
    const table = tableOf(node);
    if (table === undefined) return undefined;
    const group = table['group'] === undefined ? undefined : parsed(name, table['group']);
    if (table['group'] !== undefined && group === undefined) return undefined;
    groups.push({ group });
  }
  return groups;
}

function under(prefix: readonly (string | number)[], clashes: readonly NameClash[]): NameClash[] {
  return clashes.map((clash) => ({ path: [...prefix, ...clash.path], message: clash.message }));
}

function tableOf(value: unknown): Raw | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date)
    ? (value as Raw)
    : undefined;
}

/** The entries of a list of tables; what is not a table stands as an empty one (its fields parse as nothing). */
function entriesOf(value: unknown): Raw[];
function entriesOf<T>(value: unknown, each: (item: unknown) => T): T[];
function entriesOf<T>(value: unknown, each?: (item: unknown) => T): (T | Raw)[] {
  if (!Array.isArray(value)) return [];
  return value.map((item) => (each === undefined ? (tableOf(item) ?? {}) : each(item)));
}

/** Whether a list is absent or a list (of anything: its items are judged one by one). */
function wellFormedList(value: unknown): boolean {
  return value === undefined || Array.isArray(value);
}

/** Whether an optional list is absent, or a list whose every item passes `schema`. */
function wellFormed(value: unknown, schema: z.ZodType): boolean {
  return value === undefined || (Array.isArray(value) && value.every((item) => schema.safeParse(item).success));
}

function parsed<T>(schema: z.ZodType<T>, value: unknown): T | undefined {
  const result = schema.safeParse(value);
  return result.success ? result.data : undefined;
}

function fieldOf<T>(table: Raw, key: string, schema: z.ZodType<T>): T | undefined {
  return parsed(schema, table[key]);
}
