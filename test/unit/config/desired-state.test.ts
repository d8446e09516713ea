// [[models.available]] pin / preload / warm and [[nodes]] warm = false, as the config reads them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatProblems } from '#src/config/load.ts';
import { loadConfig } from '#src/config-tables.ts';

const NODE = '[[nodes]]\nname = "gpu-a"\nurl = "http://10.0.0.5:8000"\n';

test('desired state is read; a model without it has none', () => {
  const result = loadConfig(
    `${NODE}warm = false\n[[models.available]]\nname = "e"\nwarm = 2\npin = true\n[[models.available]]\nname = "p"\npreload = true\n[[models.available]]\nname = "plain"\n`,
    {},
  );
  assert.ok(result.ok, result.ok ? '' : formatProblems(result.problems));
  const [e, p, plain] = result.config.models.available;
  assert.deepEqual(e?.desired, { pin: true, preload: false, warm: 2 });
  assert.deepEqual(p?.desired, { pin: false, preload: true, warm: 0 });
  assert.equal(plain?.desired, undefined);
  assert.equal(result.config.nodes[0]?.warm, false);
});

test('bad values name the key and the problem', () => {
  for (const [line, path, fragment] of [
    ['warm = -1', 'models.available[0].warm', '0 or more'],
    ['warm = 1.5', 'models.available[0].warm', 'whole number'],
    ['pin = "yes"', 'models.available[0].pin', 'true or false'],
  ] as const) {
    const result = loadConfig(`${NODE}[[models.available]]\nname = "e"\n${line}\n`, {});
    assert.ok(!result.ok, line);
    assert.ok(
      result.problems.some((p) => p.path === path && p.message.includes(fragment)),
      `${line}: ${formatProblems(result.problems)}`,
    );
  }
});
