import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { spreadDelayMs, SPREAD_FROM_NODES, SPREAD_GROUPS } from '#src/core/poll-spread.ts';
import { HealthChecker, type ProbeOutcome } from '#src/nodes/index.ts';
import { Discoverer } from '#src/discovery/index.ts';
import { spec } from '#test/fixtures/builders.ts';

/** Lets the fake rounds' promises settle (a node with a round in flight is not polled again). */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('a large fleet is spread over one interval in a few even groups; a small one stays in step', () => {
  assert.deepEqual(
    [0, 1, 2, 3].map((i) => spreadDelayMs(i, 4, 2000)),
    [0, 0, 0, 0],
  );
  const n = 100;
  const delays = Array.from({ length: n }, (_, i) => spreadDelayMs(i, n, 2000));
  assert.equal(delays[0], 0);
  assert.equal(delays[50], 1000);
  assert.ok(delays.every((d, i) => d < 2000 && (i === 0 || d >= (delays[i - 1] ?? 0))));
  assert.equal(new Set(delays).size, SPREAD_GROUPS, 'one timer phase per group, not per node');
  for (const phase of new Set(delays)) assert.ok(delays.filter((d) => d === phase).length <= Math.ceil(n / SPREAD_GROUPS));
  assert.equal(spreadDelayMs(0, SPREAD_FROM_NODES, 2000), 0);
});

const INTERVAL = 2000;
const NODES = Array.from({ length: 100 }, (_, i) => spec(`n${i}`));

test('the health loop probes every node at start, then each at its own phase of the interval', async (t) => {
  const clock = new ManualClock();
  const probes: { node: string; at: number }[] = [];
  const checker = new HealthChecker({
    clock,
    intervalMs: INTERVAL,
    probe: async (node) => {
      probes.push({ node: node.name, at: clock.monotonicMs() });
      return { ok: true, latencyMs: 1 } satisfies ProbeOutcome;
    },
    onProbe: () => {},
  });
  checker.setNodes(NODES);
  const lifetime = new AbortController();
  t.after(() => lifetime.abort());
  await checker.start(lifetime.signal);
  assert.equal(probes.length, 100, 'every node at once first');
  await settle();
  const start = clock.monotonicMs();
  clock.advance(INTERVAL - 1);
  await settle();
  assert.equal(probes.length, 100, 'nothing more within the first interval');
  // Over the next interval, the second rounds arrive a few at a time, never all together.
  const perSlice: number[] = [];
  for (let slice = 0; slice < 10; slice += 1) {
    const before = probes.length;
    clock.advance(INTERVAL / 10);
    await settle();
    perSlice.push(probes.length - before);
  }
  assert.ok(Math.max(...perSlice) <= Math.ceil(100 / SPREAD_GROUPS), `second rounds spread: ${perSlice.join(',')}`);
  assert.equal(probes.filter((p) => p.at > start).length, 100, 'every node polled again within two intervals of the start');
});

test('the discovery loop spreads its later rounds the same way', async (t) => {
  const clock = new ManualClock();
  const fetches: number[] = [];
  const discoverer = new Discoverer({
    clock,
    intervalMs: INTERVAL,
    minRefreshIntervalMs: 0,
    fetch: async () => {
      fetches.push(clock.monotonicMs());
      return { ok: true, models: [] };
    },
    onResult: () => {},
  });
  discoverer.setNodes(NODES);
  const lifetime = new AbortController();
  t.after(() => lifetime.abort());
  await discoverer.start(lifetime.signal);
  assert.equal(fetches.length, 100);
  await settle();
  clock.advance(INTERVAL + INTERVAL / 2);
  await settle();
  assert.equal(
    fetches.length,
    163,
    'the groups with phases 0 to 1,000 ms (5 of 8) polled again by the middle of the second interval',
  );
});
