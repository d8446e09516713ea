import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kvModeFromArgs, routerArgsOf } from '#src/kinds/index.ts';

const BIN = ['/usr/local/bin/llama-server', '--host', '127.0.0.1', '--port', '0', '--model', 'm.gguf'];

test("a router child's KV mode, from the command line in its status.args", () => {
  const cases: [string, readonly string[], string | undefined][] = [
    ['--kv-unified', [...BIN, '--parallel', '2', '--kv-unified'], 'unified'],
    ['-kvu', [...BIN, '-np', '4', '-kvu'], 'unified'],
    ['--no-kv-unified', [...BIN, '--no-kv-unified'], 'per-slot'],
    ['-no-kvu', [...BIN, '-no-kvu'], 'per-slot'],
    [
      'an explicit --parallel without -kvu (the b10587 capture)',
      [...BIN, '--ctx-size', '1024', '--parallel', '2', '--threads', '1'],
      'per-slot',
    ],
    ['an explicit -np without -kvu', [...BIN, '-np', '3'], 'per-slot'],
    ['--parallel=2', [...BIN, '--parallel=2'], 'per-slot'],
    ['-np -1 is the automatic slot count', [...BIN, '-np', '-1'], 'unified'],
    ['neither: llama.cpp turns unified KV on for an automatic slot count', BIN, 'unified'],
    ['no args at all', [], undefined],
  ];
  for (const [what, args, expected] of cases) assert.equal(kvModeFromArgs(args), expected, what);
});

test('status.args is read only when it is an array of strings', () => {
  assert.deepEqual(routerArgsOf({ value: 'loaded', args: ['a', '-kvu'] }), ['a', '-kvu']);
  assert.equal(routerArgsOf({ value: 'loaded', args: ['a', 1] }), undefined);
  assert.equal(routerArgsOf({ value: 'loaded' }), undefined);
  assert.equal(routerArgsOf('loaded'), undefined);
  assert.equal(routerArgsOf(null), undefined);
});
