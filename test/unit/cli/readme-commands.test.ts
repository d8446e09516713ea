// Issue 43 item 8: the README's CLI table lacked `switchyard models` and `keygen`. Every command
// `switchyard --help` lists has a row in the README's CLI table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { USAGE } from '#src/cli/usage.ts';

test('the README’s CLI table has a row for every command switchyard --help lists', () => {
  const commands = USAGE.split('\n')
    .map((line) => /^ {2}([a-z][a-z-]*) /.exec(line)?.[1])
    .filter((name) => name !== undefined);
  assert.ok(commands.length >= 8, `commands read from the usage text: ${commands.join(', ')}`);
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  const rows = readme.split('\n').filter((line) => line.startsWith('| `switchyard '));
  for (const command of commands)
    assert.ok(
      rows.some((row) => row.startsWith(`| \`switchyard ${command}`)),
      `no README row for switchyard ${command}`,
    );
});
