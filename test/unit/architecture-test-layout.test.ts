// test/unit/ mirrors src/'s folders (test/README.md, issue 39): a newcomer finds the tests of
// src/<dir>/<file>.ts in test/unit/<dir>/, and a test named after a src file sits in that file's
// folder — a feature's config table moved into the feature's folder takes its test along.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { SRC, sourceFiles } from '#test/fixtures/source-tree.ts';

const UNIT = resolve(new URL('.', import.meta.url).pathname);

/** The folders of test/unit/ with no src/ counterpart, each with its reason. */
const NOT_MIRRORED: Readonly<Record<string, string>> = {
  bench: 'tests the benchmark scripts of bench/ at the repository root, which is not under src/',
  'sim/dialects':
    "the simulated servers against what the real servers answer (docs/protocols.md): a suite of src/sim/'s dialects, apart from its unit tests",
};

function folders(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => [join(dir, entry.name), ...folders(join(dir, entry.name))]);
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? testFiles(join(dir, entry.name)) : entry.name.endsWith('.test.ts') ? [join(dir, entry.name)] : [],
  );
}

const inUnit = (path: string): string => relative(UNIT, path).split(sep).join('/');
const inSrc = (path: string): string => relative(SRC, path).split(sep).join('/');

test('every folder of test/unit/ has its src/ folder, or a reason not to', () => {
  const strays = folders(UNIT)
    .map(inUnit)
    .filter((dir) => !existsSync(join(SRC, dir)) && !Object.keys(NOT_MIRRORED).some((e) => dir === e || dir.startsWith(`${e}/`)))
    .map((dir) => `test/unit/${dir}`);
  assert.deepEqual(strays, [], 'test/unit/<dir> with no src/<dir>: move the tests beside the folder of the code they test');
});

test('the exceptions are folders that exist (a stale reason is removed with its folder)', () => {
  assert.deepEqual(
    Object.keys(NOT_MIRRORED).filter((dir) => !existsSync(join(UNIT, dir))),
    [],
  );
});

test("a test named after a src file sits in that file's folder", () => {
  // `<name>.test.ts` names src's `<name>.ts`; where no `<name>.ts` is in the test's own src folder
  // but one is elsewhere, the test stayed behind when its file moved. A test named after its own
  // folder (nodes/wake/wake.test.ts) tests the folder's concept, not a file of that name.
  const bySrcName = Map.groupBy(sourceFiles(), (file) => basename(file, '.ts'));
  const misplaced = testFiles(UNIT).flatMap((file) => {
    const name = basename(file, '.test.ts');
    const dir = inUnit(dirname(file));
    if (existsSync(join(SRC, dir, `${name}.ts`)) || basename(dir) === name) return [];
    const homes = (bySrcName.get(name) ?? []).map((src) => `src/${inSrc(src)}`);
    return homes.length > 0 ? [`test/unit/${inUnit(file)} is named after ${homes.join(' or ')}`] : [];
  });
  assert.deepEqual(misplaced, []);
});
