// Features plug in (issue 39, docs/design.md "Features plug in"): every optional feature is a
// `Feature` (src/core/feature.ts) in its own folder, and the feature list (src/gateway/features.ts)
// is the one place that names them. Checked on the source text:
// - the owner (src/gateway/) declares no class but its composition root (GatewayParts);
// - a feature file (`*-feature.ts`) is a Feature, built by the feature list alone, and holds no
//   `if` on domain data: it wires, and its rules live in its concept files;
// - no file outside a feature's folder imports it, but the feature lists, a feature declared to extend
//   it (the feature arrows below) and the exceptions below, each with its reason; an arrow or an
//   exception that no import needs any more fails too (the exceptions only shrink).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { SRC, importGraph, sourceFiles } from '#test/fixtures/source-tree.ts';

const files = sourceFiles();
const shown = (file: string): string => relative(SRC, file);
const textOf = (file: string): string => readFileSync(file, 'utf8');
/** Comments and string contents blanked (line breaks kept), so that neither counts as code. */
const code = (text: string): string =>
  text
    .replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (c) => c.replace(/[^\n]/g, ' '))
    .replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g, (s) => s.replace(/[^\n]/g, ' '));

const FEATURE_LIST = 'gateway/features.ts';
/** The request plane's one list (src/plane/request-features.ts): which request features a plane host gets. */
const REQUEST_FEATURE_LIST = 'plane/request-features.ts';
/** The CLI's one list (src/cli/feature-commands.ts): the commands whose work is a feature's own (keygen: the mesh's site key). */
const CLI_FEATURE_LIST = 'cli/feature-commands.ts';
/** The config's one list (src/config-tables.ts): the features' config tables the loader is given. */
const CONFIG_TABLE_LIST = 'config-tables.ts';
const FEATURE_LISTS = [FEATURE_LIST, REQUEST_FEATURE_LIST, CLI_FEATURE_LIST, CONFIG_TABLE_LIST];
/** The request-plane seam itself (proxy/feature/) is no feature: every feature plugs into it. */
const isFeatureFile = (file: string): boolean => /-feature\.ts$/.test(file) && !shown(file).startsWith('proxy/feature/');
/** A request-plane feature's file (its half on the request path: client keys and gates, forwards, spans). */
const isRequestFeatureFile = (file: string): boolean => isFeatureFile(file) && shown(file).startsWith('proxy/');
const featureFiles = files.filter((file) => isFeatureFile(file) && !isRequestFeatureFile(file));
const requestFeatureFiles = files.filter(isRequestFeatureFile);

/** Each feature of the list and the files that are its folder (paths under src/). */
const FEATURE_FOLDERS: Readonly<Record<string, RegExp>> = {
  // A feature's request-plane half sits in its own proxy/ subfolder (proxy/ may not be imported by tenants/ or mesh/).
  tenants: /^(tenants|proxy\/tenants)\//,
  mesh: /^(mesh|proxy\/sites)\//,
  cluster: /^cluster\//,
  tracing: /^tracing\//,
  batch: /^batch\//,
  // The request log is its own files of logs/ (the process logger and the transition logs are not it).
  'request log': /^logs\/(request-|line-writer)/,
};

/**
 * Imports of a feature from outside its folder that this step did not reach: the folder (an area
 * of src/, or a file) that imports, the feature, and why. Remove an entry when its imports go.
 */
const EXCEPTIONS: readonly { readonly from: string; readonly feature: string; readonly reason: string }[] = [];

/**
 * The features that extend another feature: a concept of the one (`from`) is built on the other's
 * (`to`), so its folder may import that feature (not through an exception: the dependency is the
 * concept's own, and stays). An arrow that no import needs any more fails, like an exception.
 */
const FEATURE_ARROWS: readonly { readonly from: string; readonly to: string; readonly reason: string }[] = [
  {
    from: 'cluster',
    to: 'tenants',
    reason:
      'cluster counts the tenants’ limits and usage across replicas: its shared ledger admits with the tenants’ own pure decisions (decideAt, ledgerAdmission) and sums their reports (GET /admin/tenants for the site)',
  },
  {
    from: 'cluster',
    to: 'mesh',
    reason:
      'cluster makes the mesh’s publication one replica’s: its leader lease is the mesh’s PublishGate (one replica of a site publishes its record)',
  },
];

/** The feature whose folder holds `file` (a path under src/), if any. */
const featureOf = (file: string): string | undefined =>
  Object.entries(FEATURE_FOLDERS).find(([, folder]) => folder.test(file))?.[0];

/** Every import of a feature from outside its folder: [importing file, feature]. */
function crossings(): { readonly file: string; readonly feature: string; readonly target: string }[] {
  const graph = importGraph(files);
  return [...graph].flatMap(([file, targets]) =>
    Object.entries(FEATURE_FOLDERS).flatMap(([feature, folder]) =>
      folder.test(shown(file))
        ? []
        : [...targets].filter((t) => folder.test(shown(t))).map((t) => ({ file: shown(file), feature, target: shown(t) })),
    ),
  );
}

test('the owner (src/gateway/) declares no class but its composition root', () => {
  const classes = files
    .filter((file) => shown(file).startsWith('gateway/'))
    .flatMap((file) => [...code(textOf(file)).matchAll(/\bclass\s+(\w+)/g)].map((m) => `${shown(file)}: ${m[1]}`));
  assert.deepEqual(classes, ['gateway/parts.ts: GatewayParts']);
});

test('each feature file is a Feature, built by the feature list alone', () => {
  assert.ok(featureFiles.length >= 6, featureFiles.map(shown).join(', '));
  const problems: string[] = [];
  for (const file of featureFiles) {
    const classes = [...code(textOf(file)).matchAll(/\bexport class (\w+) implements Feature</g)].map((m) => m[1] ?? '');
    if (classes.length !== 1) problems.push(`${shown(file)}: ${classes.length} classes implement Feature`);
  }
  const builds = files.flatMap((file) =>
    [...code(textOf(file)).matchAll(/\bnew (\w+Feature)\(/g)].map((m) => ({ file: shown(file), name: m[1] ?? '' })),
  );
  for (const { file, name } of builds) if (file !== FEATURE_LIST) problems.push(`${file} builds ${name}`);
  const listed = new Set(builds.map((b) => b.name));
  for (const file of featureFiles) {
    const name = /\bexport class (\w+) implements Feature</.exec(textOf(file))?.[1];
    if (name !== undefined && !listed.has(name)) problems.push(`${shown(file)}: ${name} is not in the feature list`);
  }
  assert.deepEqual(problems, []);
});

/** The condition of each `if` (and the subject of each `switch`) in a text of code. */
function conditions(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/\b(?:if|switch)\s*\(/g)) {
    let depth = 1;
    let end = (m.index ?? 0) + m[0].length;
    for (; end < text.length && depth > 0; end += 1) {
      if (text[end] === '(') depth += 1;
      else if (text[end] === ')') depth -= 1;
    }
    found.push(text.slice((m.index ?? 0) + m[0].length, end - 1).replace(/\s+/g, ' '));
  }
  return found;
}

/** A condition that only asks whether something is there (or calls a rule that lives elsewhere). */
const onPresence = (condition: string): boolean => !/[<>]|[!=]==?/.test(condition.replace(/\s*[!=]==\s*undefined\b/g, ''));

test('feature files hold no `if` on domain data: they wire, and the rules live in their concept files', () => {
  const found = featureFiles.flatMap((file) =>
    conditions(code(textOf(file)))
      .filter((condition) => !onPresence(condition))
      .map((condition) => `${shown(file)}: if (${condition})`),
  );
  assert.deepEqual(found, []);
});

test('the domain-data check sees comparisons and passes presence checks and rule calls', () => {
  assert.deepEqual(
    conditions('if (a === undefined) x(); if (b.kind === "limited") y(); switch (c) {} if (f(g(h)) && i !== undefined) z();'),
    ['a === undefined', 'b.kind === "limited"', 'c', 'f(g(h)) && i !== undefined'],
  );
  assert.equal(onPresence('a === undefined || this.#b !== undefined'), true);
  assert.equal(onPresence('listingChanged(from, to)'), true);
  assert.equal(onPresence('decision.kind === "limited"'), false);
  assert.equal(onPresence('from.phase !== to.phase'), false);
  assert.equal(onPresence('count > 0'), false);
});

/** An import of feature `c.feature` by a file of a feature declared to extend it (FEATURE_ARROWS). */
const alongArrow = (c: { file: string; feature: string }): boolean =>
  FEATURE_ARROWS.some((a) => a.to === c.feature && a.from === featureOf(c.file));

test('no file outside a feature’s folder imports it, but the feature lists, the feature arrows and the listed exceptions', () => {
  const excepted = (c: { file: string; feature: string }): boolean =>
    EXCEPTIONS.some((e) => e.feature === c.feature && c.file.startsWith(e.from));
  const stray = crossings()
    .filter((c) => !FEATURE_LISTS.includes(c.file) && !alongArrow(c) && !excepted(c))
    .map((c) => `${c.file} imports ${c.target} (${c.feature})`);
  assert.deepEqual(stray, []);
});

test('every exception is still needed (the list only shrinks) and gives its reason', () => {
  const all = crossings();
  const stale = EXCEPTIONS.filter((e) => !all.some((c) => c.feature === e.feature && c.file.startsWith(e.from))).map(
    (e) => `${e.from} → ${e.feature}`,
  );
  assert.deepEqual(stale, []);
  for (const e of EXCEPTIONS) assert.ok(e.reason.length > 20 && e.feature in FEATURE_FOLDERS, `${e.from} → ${e.feature}`);
});

test('every feature arrow is still needed, joins two features and gives its reason', () => {
  const all = crossings();
  const stale = FEATURE_ARROWS.filter((a) => !all.some((c) => c.feature === a.to && featureOf(c.file) === a.from)).map(
    (a) => `${a.from} → ${a.to}`,
  );
  assert.deepEqual(stale, []);
  for (const a of FEATURE_ARROWS)
    assert.ok(
      a.reason.length > 20 && a.from in FEATURE_FOLDERS && a.to in FEATURE_FOLDERS && a.from !== a.to,
      `${a.from} → ${a.to}`,
    );
  // An exception inside a feature's folder towards another feature is an arrow: declare it as one.
  const misfiled = EXCEPTIONS.filter((e) => featureOf(e.from) !== undefined).map((e) => `${e.from} → ${e.feature}`);
  assert.deepEqual(misfiled, []);
});

test('the feature lists are the one file per plane outside the features that imports their feature files', () => {
  // proxy/index.ts, proxy/'s public surface, re-exports no feature's request half: the request plane's
  // list takes them from their own folders (arrows plane/ → proxy/sites/, proxy/tenants/).
  const importers = [...importGraph(files)]
    .filter(([file, targets]) => !isFeatureFile(file) && [...targets].some((t) => isFeatureFile(t)))
    .map(([file]) => shown(file))
    .sort();
  assert.deepEqual(importers, [FEATURE_LIST, REQUEST_FEATURE_LIST]);
});

test('a request-plane feature file is built by the request plane’s list alone', () => {
  assert.ok(requestFeatureFiles.length >= 2, requestFeatureFiles.map(shown).join(', '));
  const exported = requestFeatureFiles.flatMap((file) =>
    [...code(textOf(file)).matchAll(/\bexport function (\w+Feature)\(/g)].map((m) => m[1] ?? ''),
  );
  assert.ok(exported.length >= requestFeatureFiles.length, `each exports its builder: ${exported.join(', ')}`);
  const callers = files
    .filter((file) => !isRequestFeatureFile(file))
    .flatMap((file) =>
      exported
        .filter((name) => new RegExp(`\\b${name}\\(`).test(code(textOf(file))))
        .map((name) => `${shown(file)} builds ${name}`),
    )
    .filter((line) => !line.startsWith(`${REQUEST_FEATURE_LIST} `));
  assert.deepEqual(callers, []);
});

// A feature's config table (docs/design.md, "A feature's config table"): each moved table lives in
// its feature's folder and reaches the loader through the config's list, so src/config/ names none
// of them — not in code, not in a string (a table read by its TOML name, an error message naming
// it). Comments may point at them.
/** The features whose config table moved to their folder, and how a file would name each. */
const MOVED_TABLES: Readonly<Record<string, RegExp>> = {
  tenants: /tenant/i,
  mesh: /mesh/i,
  cluster: /cluster/i,
  tracing: /tracing|otlp/i,
  'request log': /\blog\b|request.?log|LogConfig/i,
  // The Files and Batch API's table (not the `batch` queue class, which is every tenant's).
  batch: /\[batch\]|\bbatch(Table|Settings|Config)\b|\.batch\b|'batch'\s*:/,
};

/** Comments blanked (line breaks kept); code and string contents stay. */
const codeAndStrings = (text: string): string =>
  text.replace(/('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`)|\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (m, str) =>
    str === undefined ? m.replace(/[^\n]/g, ' ') : m,
  );

/** Each line of `text`'s code and strings that names a moved feature's table: `line: feature`. */
function namings(text: string): string[] {
  return codeAndStrings(text)
    .split('\n')
    .flatMap((line, i) =>
      Object.entries(MOVED_TABLES)
        .filter(([, names]) => names.test(line))
        .map(([feature]) => `${i + 1}: ${feature}`),
    );
}

test('no file in src/config/ names a feature whose table moved to its folder (the loader is given the tables)', () => {
  const found = files
    .filter((file) => shown(file).startsWith('config/'))
    .flatMap((file) => namings(textOf(file)).map((hit) => `${shown(file)}:${hit}`));
  assert.deepEqual(found, []);
});

test('the config-naming check sees a table read by its name, an error message and a type, and passes comments', () => {
  assert.deepEqual(namings("const mesh = tableOf(doc['mesh']);"), ['1: mesh']);
  assert.deepEqual(namings("// [[tenants]] is the tenants' table\nconst x = 1; /* [cluster] */"), []);
  assert.deepEqual(namings("message: 'names site but [cluster] is not set'"), ['1: cluster']);
  assert.deepEqual(namings('readonly log?: LogConfig;\nreadonly tenants: readonly TenantSpec[];'), [
    '1: request log',
    '2: tenants',
  ]);
  assert.deepEqual(namings("const url = 'http://x/tracing'; // otlp"), ['1: tracing']);
});

test('each moved table is in the config list, and the list names only feature tables from their folders', () => {
  const list = textOf(files.find((file) => shown(file) === CONFIG_TABLE_LIST) ?? '');
  const tables = [...list.matchAll(/from '#src\/([^']+-table\.ts)'/g)].map((m) => m[1] ?? '');
  const owners = tables.map((table) => featureOf(table));
  assert.deepEqual([...new Set(owners)].sort(), Object.keys(MOVED_TABLES).sort(), tables.join(', '));
});

/** The files of src/ (and the packages) `start` loads by its static value imports, transitively (`import type` aside). */
function loadedClosure(start: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of textOf(file).matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?from\s+'([^']+)'/gms)) {
      const from = m[2] ?? '';
      if (m[1] !== undefined) continue;
      if (from.startsWith('#src/')) visit(join(SRC, from.slice('#src/'.length)));
      else if (from.startsWith('.')) visit(resolve(dirname(file), from));
      else seen.add(from);
    }
  };
  visit(start);
  return seen;
}

test('reading a config loads no feature’s runtime: the config list’s closure is config/, core/ and the tables’ own files', () => {
  const loaded = [...loadedClosure(join(SRC, CONFIG_TABLE_LIST))].map((f) => (f.startsWith(SRC) ? relative(SRC, f) : f));
  // A table's own files: its table, its loaded type, and the parsers only its table uses (the mesh's in mesh/config/).
  const tableFile = (f: string): boolean =>
    /-(table|config)\.ts$/.test(f) || f.startsWith('mesh/config/') || /^tenants\/(client-keys|tenant-clashes)\.ts$/.test(f);
  const stray = loaded.filter(
    (f) =>
      !(f === CONFIG_TABLE_LIST || f.startsWith('config/') || f.startsWith('core/') || f.startsWith('node:') || tableFile(f)),
  );
  assert.deepEqual(stray.sort(), ['smol-toml', 'zod']);
  assert.ok(loaded.includes('tenants/tenants-table.ts') && loaded.includes('mesh/config/mesh-table.ts'), loaded.join(', '));
});
