// The request path and the other folders name no server kind and no selection policy (issue 22):
// what a kind does is asked of its `ServerKind` (src/kinds/), and what a policy reads of a request
// is asked of the policy registry (`requestFeaturesFor`), so adding a kind or a policy touches
// only its own folder. Checked on the code, comments excluded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { NODE_KINDS, POLICY_NAMES } from '#src/config/index.ts';
import { SRC, codeOf, sourceFiles } from '#test/fixtures/source-tree.ts';

const shown = (file: string): string => `src/${relative(SRC, file)}`;
const quoted = (names: readonly string[]): string => `['"\`](?:${names.map((n) => n.replace(/[-]/g, '\\-')).join('|')})['"\`]`;

/** The lines of the files outside `allowed` whose code matches `pattern`. */
function naming(pattern: RegExp, allowed: readonly string[]): string[] {
  return sourceFiles()
    .filter((file) => !allowed.some((folder) => shown(file).startsWith(folder)))
    .flatMap((file) =>
      codeOf(readFileSync(file, 'utf8'))
        .split('\n')
        .flatMap((line, i) => (pattern.test(line) ? [`${shown(file)}:${i + 1}: ${line.trim()}`] : [])),
    );
}

test('only src/kinds/ (with the config schema, the CLI and the simulator) names a server kind', () => {
  // `auto` is also a word of other settings (`workers = "auto"`, `kv = "auto"`): it counts only where
  // it is compared with a kind or handed to `serverKind`. The other names count anywhere in code.
  const specific = NODE_KINDS.filter((k) => k !== 'auto');
  const pattern = new RegExp(
    `${quoted(specific)}|kind\\s*[!=]==?\\s*${quoted(NODE_KINDS)}|serverKind\\(\\s*${quoted(NODE_KINDS)}`,
  );
  assert.deepEqual(naming(pattern, ['src/kinds/', 'src/sim/', 'src/config/', 'src/cli/']), []);
});

test('only src/routing/ (and the config schema) names a selection policy', () => {
  assert.deepEqual(naming(new RegExp(quoted(POLICY_NAMES)), ['src/routing/', 'src/config/']), []);
});

test('the request path (src/proxy/) names no policy and no kind', () => {
  assert.deepEqual(
    naming(new RegExp(`${quoted(POLICY_NAMES)}|${quoted(NODE_KINDS)}`), []).filter((line) => line.startsWith('src/proxy/')),
    [],
  );
});
