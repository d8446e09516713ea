// The checks that compare entries or sections — unique names, references from one section to
// another, listeners apart, and each feature table's own (its `crossChecks`) — run over the
// document as written, beside the schema (load.ts), so that one run reports every problem: a typo
// in one node does not hide a duplicate name in another. Each check reads a field only through the
// schema's own rule for it, and judges as far as what parsed lets it: where its answer would hang
// on a field that did not parse, it says nothing (that field's own problem is reported already).
// Key files may be read again here; only whether two keys are equal is used, never the key.

import type { AnyConfigTable, TableSecrets } from './config-table.ts';
import { CONFIG_DEFAULTS } from './defaults.ts';
import { formatKeyPath } from './key-path.ts';
import { parseListenAddress } from './listen-address.ts';
import {
  findModelNameClashes,
  findNodeNameClashes,
  findUnservedModelGroups,
  isDeclaredModel,
  type NameClash,
} from './name-clashes.ts';
import { entriesOf, fieldOf, parsed, tableOf, under, wellFormed, type RawTable as Raw } from './raw-document.ts';
import { name, nodeName } from './schema-parts.ts';
import type { ConfigProblem } from './types.ts';

/** The document's own checks, then each table's in the list's order. */
export function crossCheckProblems(document: unknown, secrets: TableSecrets, tables: readonly AnyConfigTable[]): ConfigProblem[] {
  const doc = tableOf(document) ?? {};
  const clashes = [
    ...modelAndNodeClashes(doc),
    ...listenerClashes(doc),
    ...tables.flatMap((table) => table.crossChecks?.(doc, secrets) ?? []),
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
