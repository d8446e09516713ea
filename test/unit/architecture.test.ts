// The architecture's rules, checked on the source text (docs/design.md): imports point one way, along
// the allowed folder arrows only, files stay small, only src/kinds/ knows a server kind's own paths,
// no module holds mutable state, and no file loads undici's whole index.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import {
  SRC,
  areaArrows,
  areaOf,
  cycles,
  folderGraph,
  importGraph,
  sourceFiles,
  topLevelConsts,
  valueImportLines,
  type TopLevelConst,
} from '#test/fixtures/source-tree.ts';

const files = sourceFiles();
const shown = (file: string): string => `src/${relative(SRC, file)}`;
const outsideSim = files.filter((file) => !shown(file).startsWith('src/sim/'));

test('no import cycle in src/, between files or between top-level folders', () => {
  const graph = importGraph(files);
  const found = [
    ...cycles(graph).map((c) => c.map(shown).join(' <-> ')),
    ...cycles(folderGraph(graph)).map((c) => c.join(' <-> ')),
  ];
  assert.deepEqual(found, []);
});

// The formatter (prettier, 130 columns: `npm run check`) keeps lines short. File length is a
// reviewer's question ("which concept is this?"), not a number to carve to: this bound only catches a
// file that has plainly become several concepts.
test('no file in src/ outside src/sim/ has grown past 500 lines (one concept a file)', () => {
  const long = outsideSim
    .map((file) => ({ file: shown(file), lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
    .filter((f) => f.lines > 500);
  assert.deepEqual(long, []);
});

test('only src/kinds/ (and the simulator) names a server kind’s own paths', () => {
  const KIND_PATHS = /\/(props|api\/ps|api\/version|api\/tags|tokenize)\b/;
  // Comments may mention the paths; code may not. (`//` after a colon is a URL, not a comment.)
  const code = (text: string): string =>
    text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/(^|[^:])\/\/.*$/gm, '$1');
  const naming = outsideSim
    .filter((file) => !shown(file).startsWith('src/kinds/'))
    .flatMap((file) =>
      code(readFileSync(file, 'utf8'))
        .split('\n')
        .flatMap((line, i) => (KIND_PATHS.test(line) ? [`${shown(file)}:${i + 1}`] : [])),
    );
  assert.deepEqual(naming, []);
});

test('no module-level mutable state (let/var at the top level) in src/', () => {
  const found = files.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) => (/^(export )?(let|var) /.test(line) ? [`${shown(file)}:${i + 1}`] : [])),
  );
  assert.deepEqual(found, []);
});

// ── Allowed folder arrows ───────────────────────────────────────────────────────────────────────
// Each area (a top-level folder of src/, proxy/'s subfolders, main.ts) → the areas it may import.
// An import edge not listed here fails the test; an arrow listed but unused is fine. docs/design.md
// ("Allowed folder arrows") shows the same list, and the test below checks that it does.
// `proxy/` is proxy/index.ts, the folder's public surface: other folders import proxy through it
// only. Its subfolders, lowest first: http ← attempt ← request ← failover ← refusal ← sites ← inference.
// PLANNED (issue 22, other branches): ports/ and plane/ are declared before they exist, with the
// arrows the plan gives them; adjust both when the branches merge (and main.ts, workers/, gateway/).
const CORE = ['core/', 'config/'];
const ALLOWED_ARROWS: Readonly<Record<string, readonly string[]>> = {
  'core/': [],
  'config/': ['core/'],
  'state/': [...CORE],
  'translate/': [...CORE],
  'tenants/': [...CORE, 'discovery/', 'state/', 'scheduler/'],
  'kinds/': [...CORE],
  'discovery/': [...CORE, 'kinds/'],
  'capacity/': [...CORE, 'kinds/', 'discovery/'],
  'nodes/': [...CORE, 'kinds/', 'discovery/', 'capacity/'],
  // Node sources (the [[nodes]] list, DNS): they yield node specs; the gateway applies them through the reload path.
  'fleet/': [...CORE],
  'routing/': [...CORE, 'kinds/', 'discovery/', 'capacity/', 'nodes/'],
  'scheduler/': [...CORE, 'kinds/', 'capacity/', 'nodes/', 'routing/'],
  'mesh/': [...CORE, 'capacity/', 'nodes/', 'routing/'],
  'cluster/': [...CORE, 'capacity/', 'nodes/', 'routing/', 'scheduler/', 'mesh/', 'tenants/'],
  'ports/': [...CORE, 'capacity/', 'nodes/', 'routing/', 'scheduler/'],
  'proxy/http/': [...CORE, 'translate/'],
  'proxy/attempt/': [...CORE, 'kinds/', 'proxy/http/'],
  'proxy/request/': [
    ...CORE,
    'kinds/',
    'discovery/',
    'capacity/',
    'nodes/',
    'routing/',
    'scheduler/',
    'proxy/attempt/',
    'tenants/',
  ],
  'proxy/failover/': [
    ...CORE,
    // What an attempt's outcome teaches of the node's speed (attempt-feedback.ts) reads capacity's decode-rate rules.
    'capacity/',
    'nodes/',
    'routing/',
    'scheduler/',
    'ports/',
    'proxy/http/',
    'proxy/attempt/',
    'proxy/request/',
    'tenants/',
  ],
  'proxy/refusal/': [
    ...CORE,
    'nodes/',
    'routing/',
    'scheduler/',
    'proxy/attempt/',
    'proxy/request/',
    'proxy/failover/',
    'tenants/',
  ],
  'proxy/feature/': [...CORE, 'routing/', 'proxy/attempt/', 'proxy/request/', 'proxy/failover/', 'proxy/refusal/'],
  'proxy/sites/': [
    ...CORE,
    'mesh/',
    'routing/',
    'ports/',
    'proxy/http/',
    'proxy/attempt/',
    'proxy/request/',
    'proxy/failover/',
    'proxy/refusal/',
    'proxy/feature/',
  ],
  'proxy/tenants/': [...CORE, 'ports/', 'tenants/', 'proxy/http/', 'proxy/request/', 'proxy/feature/'],
  'proxy/streams/': [...CORE, 'routing/', 'proxy/http/', 'proxy/feature/'],
  'proxy/translate/': [
    ...CORE,
    'nodes/',
    'routing/',
    'ports/',
    'translate/',
    'proxy/http/',
    'proxy/attempt/',
    'proxy/request/',
    'proxy/feature/',
  ],
  'proxy/inference/': [
    ...CORE,
    'nodes/',
    'routing/',
    'scheduler/',
    'ports/',
    'proxy/http/',
    'proxy/attempt/',
    'proxy/request/',
    'proxy/failover/',
    'proxy/refusal/',
    'proxy/feature/',
  ],
  'proxy/': [
    'proxy/http/',
    'proxy/attempt/',
    'proxy/request/',
    'proxy/failover/',
    'proxy/refusal/',
    'proxy/feature/',
    'proxy/translate/',
    'proxy/inference/',
  ],
  // The request plane's feature list (plane/request-features.ts) takes the features' request halves from their own folders.
  'plane/': [
    ...CORE,
    'capacity/',
    'nodes/',
    'routing/',
    'scheduler/',
    'mesh/',
    'ports/',
    'proxy/',
    'proxy/sites/',
    'proxy/tenants/',
    'proxy/translate/',
    'proxy/streams/',
    'tenants/',
    'tracing/',
    'translate/',
    'batch/',
  ],
  'tracing/': [...CORE, 'proxy/'],
  // The Files and Batch API: its records in state_dir, its pacing over the fleet's views, its routes on the request plane's seam.
  'batch/': [...CORE, 'state/', 'capacity/', 'nodes/', 'proxy/'],
  'metrics/': [...CORE, 'discovery/', 'nodes/', 'routing/', 'mesh/', 'proxy/'],
  'logs/': [...CORE, 'discovery/', 'nodes/', 'scheduler/', 'mesh/', 'proxy/', 'tenants/'],
  'admin/': [...CORE, 'capacity/', 'nodes/', 'routing/', 'scheduler/', 'proxy/'],
  'workers/': [...CORE, 'capacity/', 'nodes/', 'routing/', 'scheduler/', 'proxy/', 'ports/', 'plane/'],
  'gateway/': [
    ...CORE,
    'state/',
    'fleet/',
    'discovery/',
    'capacity/',
    'nodes/',
    'routing/',
    'scheduler/',
    'mesh/',
    'cluster/',
    'proxy/',
    'metrics/',
    'logs/',
    'admin/',
    'workers/',
    'ports/',
    'plane/',
    'tenants/',
    'tracing/',
    'translate/',
    'config-tables.ts',
    'batch/',
  ],
  'main.ts': [...CORE, 'nodes/', 'proxy/', 'admin/', 'workers/', 'gateway/', 'ports/', 'plane/', 'config-tables.ts'],
  // fleet/: `switchyard init` resolves a name with the DNS node source's own lookup (a name of several servers becomes a source).
  'cli/': [
    ...CORE,
    'kinds/',
    'discovery/',
    'capacity/',
    'fleet/',
    'mesh/',
    'admin/',
    'logs/',
    'sim/',
    'main.ts',
    'config-tables.ts',
  ],
  'sim/': ['core/'],
  // The config's feature list (src/config-tables.ts): the features' config tables, bound to the loader.
  'config-tables.ts': [...CORE, 'tenants/', 'mesh/', 'cluster/', 'logs/', 'tracing/', 'batch/'],
};

test('every import between areas of src/ follows an allowed folder arrow', () => {
  const stray = areaArrows(importGraph(files))
    .filter((arrow) => !(ALLOWED_ARROWS[arrow.from] ?? []).includes(arrow.to))
    .map((arrow) => `${arrow.from} → ${arrow.to} (${shown(arrow.example[0])} imports ${shown(arrow.example[1])})`);
  assert.deepEqual(stray, []);
});

test('every area of src/ is declared in the allowed folder arrows', () => {
  const undeclared = [...new Set(files.map(areaOf))].filter((area) => !(area in ALLOWED_ARROWS));
  assert.deepEqual(undeclared, []);
});

test('the allowed folder arrows point one way (no cycle in the list itself)', () => {
  const graph = new Map(Object.entries(ALLOWED_ARROWS).map(([from, to]) => [from, new Set(to)]));
  assert.deepEqual(cycles(graph), []);
});

test('docs/design.md shows the same allowed folder arrows', () => {
  const design = readFileSync(new URL('../../docs/design.md', import.meta.url), 'utf8');
  const block = /## Allowed folder arrows[\s\S]*?```\n([\s\S]*?)```/.exec(design)?.[1] ?? '';
  const documented = Object.fromEntries(
    block
      .split('\n')
      .map((line) => line.replace(/#.*$/, '').trim())
      .filter((line) => line.includes('→'))
      .map((line) => {
        const [from = '', to = ''] = line.split('→').map((side) => side.trim());
        return [
          from,
          to
            .split(/\s+/)
            .filter((a) => a !== '' && a !== '(nothing)')
            .sort(),
        ];
      }),
  );
  const listed = Object.fromEntries(Object.entries(ALLOWED_ARROWS).map(([from, to]) => [from, [...to].sort()]));
  assert.deepEqual(documented, listed);
});

// ── No module-level mutable state ───────────────────────────────────────────────────────────────
// A top-level const is state when what it holds can change: a Map/Set (unless typed ReadonlyMap /
// ReadonlySet), a WeakMap/WeakSet, any other constructed object (errors excepted: a sentinel error
// is a value), or an array/object literal that is neither `as const`, Object.freeze()d, nor typed
// readonly (`readonly T[]`, `Readonly<…>`, or a named type whose every property is readonly).
/** Blanks comments (keeping line breaks), so that braces and semicolons in them do not count. */
const withoutComments = (text: string): string => text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (c) => c.replace(/[^\n]/g, ' '));

/** The text up to the bracket that closes the one before `start` (or up to the first `;` at depth 0). */
function scan(text: string, start: number, untilSemicolon: boolean): string {
  let depth = untilSemicolon ? 0 : 1;
  for (let end = start; end < text.length; end += 1) {
    const c = text[end];
    if (c === '{' || c === '(' || c === '[' || c === '<') depth += 1;
    else if (c === '}' || c === ')' || c === ']' || (c === '>' && text[end - 1] !== '=')) depth -= 1;
    if ((untilSemicolon && depth === 0 && c === ';') || (!untilSemicolon && depth === 0)) return text.slice(start, end);
  }
  return text.slice(start);
}

/** Splits at depth 0 of brackets: the members of an object type, or the object literals of a union. */
function depthZero(text: string, keep: (c: string, depth: number) => 'split' | 'open' | 'close' | 'none'): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i] ?? '';
    const kind = keep(c, depth);
    if (kind === 'open') depth += 1;
    else if (kind === 'close') depth -= 1;
    if (kind === 'split' && depth === 0) {
      parts.push(text.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(text.slice(from));
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}
const bracket = (c: string): 'open' | 'close' | 'none' => ('{([<'.includes(c) ? 'open' : '})]>'.includes(c) ? 'close' : 'none');

/** Every object type declared in src/ (interface, or a type alias of object literals or their union): its bodies. */
const declarations: ReadonlyMap<string, readonly string[]> = new Map(
  files.flatMap((file) => {
    const text = withoutComments(readFileSync(file, 'utf8'));
    return [
      ...text.matchAll(/^(?:export )?(?:interface ([A-Z]\w*)(?:<[^{]*>)?(?: extends [^{]+)? \{|type ([A-Z]\w*)(?:<[^=]*>)? =)/gm),
    ].map((m) => {
      const start = (m.index ?? 0) + m[0].length;
      if (m[1] !== undefined) return [m[1], [scan(text, start, false)]] as [string, string[]];
      const union = depthZero(scan(text, start, true), (c) => (c === '|' ? 'split' : bracket(c)));
      const objects = union.every((member) => member.startsWith('{') && member.endsWith('}'))
        ? union.map((member) => member.slice(1, -1))
        : [];
      return [m[2] ?? '', objects] as [string, string[]];
    });
  }),
);

/** Whether every property (and index signature) of an object type (written out, or named and declared in src/) is readonly. */
function isReadonlyType(annotation: string): boolean {
  const bodies =
    annotation.startsWith('{') && annotation.endsWith('}') ? [annotation.slice(1, -1)] : (declarations.get(annotation) ?? []);
  const members = bodies.flatMap((body) => depthZero(body, (c) => (c === ';' || c === ',' || c === '\n' ? 'split' : bracket(c))));
  // A method signature is behaviour, not a slot: only properties and index signatures must be readonly.
  return bodies.length > 0 && members.every((member) => member.startsWith('readonly ') || /^[\w$]+\??\s*[(<]/.test(member));
}

function holdsState(c: TopLevelConst): boolean {
  const annotation = c.annotation ?? '';
  const init = c.initializer.replace(/\s+satisfies\s+[\s\S]*$/, '');
  const constructed = /^new\s+([\w$.]+)/.exec(init)?.[1];
  if (constructed !== undefined) {
    if (/Error$/.test(constructed)) return false;
    return !(
      (constructed === 'Map' && /^ReadonlyMap</.test(annotation)) ||
      (constructed === 'Set' && /^ReadonlySet</.test(annotation))
    );
  }
  if (!/^[[{]/.test(init)) return false;
  if (/\bas const$/.test(init)) return false;
  if (/^(readonly\s|ReadonlyArray<|Readonly<)/.test(annotation)) return false;
  return !(
    init.startsWith('{') &&
    (/^[A-Z][\w$]*$/.test(annotation) || annotation.startsWith('{')) &&
    isReadonlyType(annotation)
  );
}

test('no module-level mutable state (a top-level Map, Set, array or object that can change) in src/', () => {
  const found = files.flatMap((file) =>
    topLevelConsts(readFileSync(file, 'utf8'))
      .filter(holdsState)
      .map((c) => `${shown(file)}:${c.line} ${c.name}`),
  );
  assert.deepEqual(found, []);
});

test('only the request-plane builder (src/plane/) opens listeners and builds the request pools (issue 22)', () => {
  // The node pools and the remote sites' pools alike, and the rest of what makes a request plane
  // (its public table, its held budget, forwarding's deps); the definitions themselves do not count.
  const BUILDS = /\bcreateHttpServer\(|\bnew UpstreamPools\(|\bpublicEndpoints\(|\bnew HeldBytesBudget\(|\bremoteDeps\(/;
  const found = files
    .filter((file) => !shown(file).startsWith('src/plane/'))
    .flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (BUILDS.test(line) && !/^export function /.test(line) ? [`${shown(file)}:${i + 1}`] : [])),
    );
  assert.deepEqual(found, []);
});

test('no file in src/ loads undici’s index: Pool, Agent and errors come through src/core/undici-parts.ts (issue 28)', () => {
  // The index loads ~110 modules (fetch, WebSocket, the cache stores, the mocks) for the ~22 the
  // gateway runs, ~4 MB of an idle gateway's RSS. `import type` from 'undici' loads nothing.
  const found = files.flatMap((file) =>
    valueImportLines(readFileSync(file, 'utf8'), 'undici').map((line) => `${shown(file)}:${line}`),
  );
  assert.deepEqual(found, []);
});

test('the undici-index check sees each way of loading a module and passes type-only imports', () => {
  const cases: readonly (readonly [string, readonly number[]])[] = [
    ["import { Pool } from 'undici';", [1]],
    ['import { Agent, type Dispatcher } from "undici";', [1]],
    ["import { type Dispatcher } from 'undici';", [1]],
    ["import {\n  Pool,\n  errors,\n} from 'undici';", [1]],
    ["import * as undici from 'undici';", [1]],
    ["import 'undici';", [1]],
    ["export { Pool } from 'undici';", [1]],
    ["const x = 1;\nconst undici = await import('undici');", [2]],
    ["const undici = require('undici');", [1]],
    ["import type { Dispatcher } from 'undici';", []],
    ["import type {\n  Dispatcher,\n} from 'undici';", []],
    ["export type { Dispatcher } from 'undici';", []],
    ["import Pool from 'undici/lib/dispatcher/pool.js';", []],
    ["import { x } from './undici.ts';", []],
    ["// import { Pool } from 'undici';", []],
    ["import type { A } from './a.ts';\nimport { Pool } from 'undici';", [2]],
  ];
  for (const [text, lines] of cases) assert.deepEqual(valueImportLines(text, 'undici'), lines, text);
});
