// Arguments the simulated model writes for a tool call: a JSON value that satisfies the tool's JSON
// schema, deterministically. Required properties are filled (optional ones left out), with the
// schema's own `const`, `enum`, `default` or `examples` when it has them, else a plain value of the
// right type; a string is chosen from the property's name where an agent's tools make that
// meaningful (a shell `command` runs `ls`, a `path` is `.`, a `query` repeats the user's words).

import { isRecord } from '#src/core/is-record.ts';

type Schema = Readonly<Record<string, unknown>>;

/** How deep nested schemas (and `$ref`s) are followed before answering null. */
const MAX_DEPTH = 12;

const STRING_BY_NAME: readonly [RegExp, string][] = [
  [/^(command|cmd|script)$/i, 'ls'],
  [/^(pattern|glob)$/i, '*'],
  [/^(path|dir|directory|cwd|workdir|folder)$/i, '.'],
  [/(file_?path|filename|file)$/i, 'README.md'],
  [/^ur[il]$/i, 'https://example.com/'],
];

/** `#/$defs/x` and `#/definitions/x` within the root schema. */
function resolveRef(ref: string, root: Schema): Schema | undefined {
  const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  if (match === null) return undefined;
  const defs = root[match[1] ?? ''];
  const found = isRecord(defs) ? defs[match[2] ?? ''] : undefined;
  return isRecord(found) ? found : undefined;
}

function firstType(schema: Schema): string | undefined {
  const type = schema['type'];
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return type.find((t): t is string => typeof t === 'string' && t !== 'null') ?? 'null';
  if (isRecord(schema['properties'])) return 'object';
  if (isRecord(schema['items'])) return 'array';
  return undefined;
}

function matchesType(value: unknown, type: string | undefined): boolean {
  switch (type) {
    case undefined:
      return true;
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isRecord(value);
    case 'null':
      return value === null;
    default:
      return typeof value === type;
  }
}

function stringFor(schema: Schema, name: string, userText: string): string {
  if (/^(query|q|search|prompt|question|text|message|description|content)$/i.test(name) && userText !== '') {
    return userText.slice(0, 80);
  }
  const byName = STRING_BY_NAME.find(([pattern]) => pattern.test(name))?.[1];
  let value =
    byName ??
    (schema['format'] === 'date-time' ? '2026-01-01T00:00:00Z' : schema['format'] === 'uri' ? 'https://example.com/' : 'sim');
  const minLength = typeof schema['minLength'] === 'number' ? schema['minLength'] : 0;
  while (value.length < minLength) value += 'x';
  return value;
}

function numberFor(schema: Schema, integer: boolean): number {
  const minimum = typeof schema['minimum'] === 'number' ? schema['minimum'] : undefined;
  const exclusive = typeof schema['exclusiveMinimum'] === 'number' ? schema['exclusiveMinimum'] + (integer ? 1 : 0.5) : undefined;
  const maximum = typeof schema['maximum'] === 'number' ? schema['maximum'] : undefined;
  let value = Math.max(1, minimum ?? Number.NEGATIVE_INFINITY, exclusive ?? Number.NEGATIVE_INFINITY);
  if (maximum !== undefined && value > maximum) value = maximum;
  return integer ? Math.ceil(value) : value;
}

function valueFor(schema: Schema, name: string, root: Schema, userText: string, depth: number): unknown {
  if (depth > MAX_DEPTH) return null;
  const ref = schema['$ref'];
  if (typeof ref === 'string') {
    const target = resolveRef(ref, root);
    return target === undefined ? null : valueFor(target, name, root, userText, depth + 1);
  }
  if ('const' in schema) return schema['const'];
  const type = firstType(schema);
  if (Array.isArray(schema['enum']) && schema['enum'].length > 0) return schema['enum'][0];
  if ('default' in schema && matchesType(schema['default'], type)) return schema['default'];
  const examples = schema['examples'];
  if (Array.isArray(examples) && examples.length > 0 && matchesType(examples[0], type)) return examples[0];
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    const options = schema[key];
    if (!Array.isArray(options)) continue;
    const option = options.find((o) => isRecord(o) && o['type'] !== 'null');
    if (isRecord(option)) return valueFor({ ...schema, [key]: undefined, ...option }, name, root, userText, depth + 1);
  }
  switch (type) {
    case 'object':
      return objectFor(schema, root, userText, depth + 1);
    case 'array': {
      const items = isRecord(schema['items']) ? schema['items'] : {};
      const minItems = typeof schema['minItems'] === 'number' ? schema['minItems'] : 0;
      const maxItems = typeof schema['maxItems'] === 'number' ? schema['maxItems'] : Number.POSITIVE_INFINITY;
      const count = Math.min(maxItems, Math.max(minItems, 1));
      return Array.from({ length: count }, () => valueFor(items, name, root, userText, depth + 1));
    }
    case 'integer':
      return numberFor(schema, true);
    case 'number':
      return numberFor(schema, false);
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return stringFor(schema, name, userText);
  }
}

function objectFor(schema: Schema, root: Schema, userText: string, depth: number): Record<string, unknown> {
  const properties = isRecord(schema['properties']) ? schema['properties'] : {};
  const required = Array.isArray(schema['required']) ? schema['required'].filter((r): r is string => typeof r === 'string') : [];
  const value: Record<string, unknown> = {};
  for (const key of required) {
    const property = properties[key];
    value[key] = valueFor(isRecord(property) ? property : {}, key, root, userText, depth);
  }
  return value;
}

/** The arguments object for a tool whose parameters are `schema`; `userText` fills query-like fields. */
export function toolArguments(schema: Schema, userText: string): Record<string, unknown> {
  return objectFor(schema, schema, userText, 0);
}
