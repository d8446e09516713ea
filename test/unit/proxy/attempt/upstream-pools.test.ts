// UpstreamPools on reload: pools close for removed and moved nodes, and all of them for a change of
// the settings a pool is built from; other upstream settings leave open connections alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONFIG_DEFAULTS } from '#src/config/defaults.ts';
import { diffNodes, type UpstreamConfig } from '#src/config/index.ts';
import { ManualClock } from '#src/core/clock.ts';
import { UpstreamPools } from '#src/proxy/index.ts';
import { spec } from '#test/fixtures/builders.ts';

const settings = CONFIG_DEFAULTS.upstream;

test('a reload closes the pools of removed and moved nodes and keeps the rest', async (t) => {
  const pools = new UpstreamPools(settings, { clock: new ManualClock() });
  t.after(() => pools.close());
  const before = [spec('kept'), spec('relisted'), spec('moved'), spec('gone')];
  const kept = pools.get(spec('kept'));
  for (const node of before.slice(1)) pools.get(node);
  const keptNext = spec('kept', { group: 'g' });
  const after = [keptNext, spec('relisted', { apiKey: 'sk-new' }), spec('moved', { url: 'http://127.0.0.1:2/moved' })];
  const perRequestOnly: UpstreamConfig = { ...settings, maxHeldBodyBytes: settings.maxHeldBodyBytes + 1, ejectForMs: 1 };
  pools.applyChange(diffNodes(before, after), perRequestOnly);
  assert.deepEqual(Object.keys(pools.stats()), ['kept', 'relisted']);
  assert.equal(pools.get(keptNext), kept, 'the same pool, its connections kept');
});

test('a reload that changes a pool setting closes every pool', async (t) => {
  const pools = new UpstreamPools(settings, { clock: new ManualClock() });
  t.after(() => pools.close());
  const nodes = [spec('a'), spec('b')];
  for (const node of nodes) pools.get(node);
  pools.applyChange(diffNodes(nodes, nodes), { ...settings, connectTimeoutMs: settings.connectTimeoutMs + 1 });
  assert.deepEqual(pools.stats(), {});
});
