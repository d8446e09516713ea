// The architecture's rules, checked on the source text (docs/design.md): imports point one way, files
// stay small, only src/kinds/ knows a server kind's own paths, and no module holds mutable state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { SRC, cycles, folderGraph, importGraph, sourceFiles } from '#test/fixtures/source-tree.ts';

const files = sourceFiles();
const shown = (file: string): string => `src/${relative(SRC, file)}`;
const outsideSim = files.filter((file) => !shown(file).startsWith('src/sim/'));

test('no import cycle in src/, between files or between top-level folders', () => {
  const graph = importGraph(files);
  const found = [...cycles(graph).map((c) => c.map(shown).join(' <-> ')), ...cycles(folderGraph(graph)).map((c) => c.join(' <-> '))];
  assert.deepEqual(found, []);
});

test('no file in src/ outside src/sim/ is longer than 300 lines', () => {
  const long = outsideSim
    .map((file) => ({ file: shown(file), lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
    .filter((f) => f.lines > 300);
  assert.deepEqual(long, []);
});

test('only src/kinds/ (and the simulator) names a server kind’s own paths', () => {
  const KIND_PATHS = /\/(props|api\/ps|api\/version|api\/tags|tokenize)\b/;
  // Comments may mention the paths; code may not. (`//` after a colon is a URL, not a comment.)
  const code = (text: string): string => text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/(^|[^:])\/\/.*$/gm, '$1');
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
      .flatMap((line, i) => (/^(let|var) /.test(line) ? [`${shown(file)}:${i + 1}`] : [])),
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
