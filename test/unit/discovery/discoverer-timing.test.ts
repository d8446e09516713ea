// Discoverer.setTiming: a config reload's discovery.interval and miss_cooldown apply at once.
// Regression: the interval and cooldown were fixed at construction, so a reload that shortened
// discovery.interval (e.g. from 1h) did nothing until the old interval had run out.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { NodeSpec } from '#src/config/types.ts';
import { ManualClock } from '#src/core/clock.ts';
import { Discoverer } from '#src/discovery/discoverer.ts';
import type { DiscoveryResult } from '#src/discovery/discovery-state.ts';
import { spec } from '#test/fixtures/builders.ts';

const HOUR_MS = 3_600_000;
const OK: DiscoveryResult = {
  ok: true,
  models: [{ id: 'm', loaded: true, status: undefined, contextTokens: undefined, aliases: [] }],
};

function nodeSpec(name: string): NodeSpec {
  return spec(name, { url: `http://${name}:8000`, kind: 'vllm' });
}

/** A discoverer whose fetches answer at once, counting them per node. */
async function startRig(
  t: TestContext,
  minRefreshIntervalMs: number,
): Promise<{ clock: ManualClock; discoverer: Discoverer; fetches: string[] }> {
  const clock = new ManualClock();
  const fetches: string[] = [];
  const discoverer = new Discoverer({
    clock,
    intervalMs: HOUR_MS,
    minRefreshIntervalMs,
    fetch: (node) => {
      fetches.push(node.name);
      return Promise.resolve(OK);
    },
    onResult: () => {},
  });
  discoverer.setNodes([nodeSpec('a')]);
  const lifetime = new AbortController();
  t.after(async () => {
    lifetime.abort();
    await discoverer.stop();
  });
  await discoverer.start(lifetime.signal);
  await flush();
  return { clock, discoverer, fetches };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('a shorter interval applies from now instead of after the old interval runs out', async (t) => {
  const { clock, discoverer, fetches } = await startRig(t, 0);
  assert.equal(fetches.length, 1);
  discoverer.setTiming({ intervalMs: 100, minRefreshIntervalMs: 0 });
  clock.advance(99);
  assert.equal(fetches.length, 1, 'the new interval counts from the change');
  clock.advance(1);
  await flush();
  clock.advance(100);
  assert.equal(fetches.length, 3);
});

test("an unchanged interval keeps each node's timer where it was", async (t) => {
  const { clock, discoverer, fetches } = await startRig(t, 0);
  clock.advance(HOUR_MS - 10);
  discoverer.setTiming({ intervalMs: HOUR_MS, minRefreshIntervalMs: 5 });
  clock.advance(10);
  assert.equal(fetches.length, 2);
});

test('a new miss cooldown applies to the next refresh', async (t) => {
  const { clock, discoverer, fetches } = await startRig(t, 60_000);
  await discoverer.refresh(['a']);
  await discoverer.refresh(['a']);
  assert.equal(fetches.length, 2, 'the second refresh is within the cooldown');
  discoverer.setTiming({ intervalMs: HOUR_MS, minRefreshIntervalMs: 1_000 });
  clock.advance(1_000);
  await discoverer.refresh(['a']);
  assert.equal(fetches.length, 3);
});
