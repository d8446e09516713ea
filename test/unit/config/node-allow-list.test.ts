import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '#src/config-tables.ts';

const node = (extra: string): string => `[[nodes]]\nname = "a"\nurl = "http://127.0.0.1:1"\n${extra}\n`;

test('[[nodes]] models is an allow-list of ids or patterns; absent means any model', () => {
  const listed = loadConfig(node('models = ["llama-*", "qwen"]'), {});
  assert.ok(listed.ok);
  assert.deepEqual(listed.config.nodes[0]?.allowedModels, ['llama-*', 'qwen']);
  const absent = loadConfig(node(''), {});
  assert.ok(absent.ok);
  assert.equal(absent.config.nodes[0]?.allowedModels, undefined);
});

test('[[nodes]] models must list at least one non-empty pattern', () => {
  for (const [value, message] of [
    ['[]', 'nodes[0].models: must list at least one model id or pattern; leave it out to allow any model'],
    ['"llama-*"', 'nodes[0].models: must be an array of model ids or patterns, like ["llama-*"]'],
    ['[""]', 'nodes[0].models[0]: must not be empty'],
  ] as const) {
    const result = loadConfig(node(`models = ${value}`), {});
    assert.ok(!result.ok, value);
    assert.deepEqual(
      result.problems.map((p) => `${p.path}: ${p.message}`),
      [message],
      value,
    );
  }
});
