// The one rule for "the same node" across a reload: what changed under a node's name decides
// whether it carries on, carries on but is listed afresh, or starts fresh as another server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isSameAllowList, nodeContinuity, type NodeContinuity } from '#src/config/node-identity.ts';
import type { NodeSpec } from '#src/config/types.ts';
import { spec } from '#test/fixtures/builders.ts';

test('what changed under a node name decides how much of the node carries on', () => {
  const rows: readonly (readonly [string, Partial<NodeSpec>, NodeContinuity])[] = [
    ['nothing', {}, 'kept'],
    ['its group', { group: 'big' }, 'kept'],
    ['its kv layout', { kv: 'per-slot' }, 'kept'],
    ['its wake timeout', { wakeTimeoutMs: 5_000 }, 'kept'],
    ['its api key', { apiKey: 'sk-new' }, 'relisted'],
    ['its kind', { kind: 'vllm' }, 'relisted'],
    ['its allowed models', { allowedModels: ['llama-*'] }, 'relisted'],
    ['its url', { url: 'http://127.0.0.1:2/a' }, 'replaced'],
    ['its url and its key', { url: 'http://127.0.0.1:2/a', apiKey: 'sk-new' }, 'replaced'],
  ];
  for (const [what, overrides, expected] of rows) {
    assert.equal(nodeContinuity(spec('a'), spec('a', overrides)), expected, `a change of ${what}`);
  }
});

test('two allow-lists are the same only pattern for pattern, in order', () => {
  const rows: readonly (readonly [readonly string[] | undefined, readonly string[] | undefined, boolean])[] = [
    [undefined, undefined, true],
    [['a'], undefined, false],
    [undefined, ['a'], false],
    [['a', 'b'], ['a', 'b'], true],
    [['a', 'b'], ['b', 'a'], false],
    [['a'], ['a', 'b'], false],
  ];
  for (const [a, b, expected] of rows) assert.equal(isSameAllowList(a, b), expected, `${String(a)} vs ${String(b)}`);
});
