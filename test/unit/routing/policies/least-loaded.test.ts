import assert from 'node:assert/strict';
import { test } from 'node:test';
import { judgeLoad, type LoadReading, type RoutingSnapshot } from '#src/nodes/index.ts';
import { createPolicy, loadScore } from '#src/routing/index.ts';
import { node, request, snapshotOf, policyContext } from '#test/fixtures/builders.ts';

const NOW = snapshotOf([]).now;
const reading = (running: number, waiting: number, ageMs = 0, inFlightAtScrape = 0, kvUsage?: number): LoadReading => ({
  ok: true,
  figures: { running, waiting, kvUsage },
  atMs: NOW - ageMs,
  inFlightAtScrape,
});

function withLoads(snapshot: RoutingSnapshot, loads: Readonly<Record<string, LoadReading>>): RoutingSnapshot {
  return { ...snapshot, load: (name) => loads[name] };
}

test('judgeLoad: figures are used only when the kind has them, they were read, and are fresh', () => {
  const cases: [string, LoadReading | undefined, boolean, string | undefined][] = [
    ['fresh figures', reading(1, 2, 1_000), true, undefined],
    ['a kind without metrics', undefined, false, 'kind exports no load metrics'],
    ['never read', undefined, true, 'no load metrics read yet'],
    ['too old', reading(1, 2, 31_000), true, 'load metrics stale (31s old)'],
    ['unreadable', { ok: false, error: 'HTTP 501', atMs: NOW, inFlightAtScrape: 0 }, true, 'load metrics unreadable: HTTP 501'],
  ];
  for (const [what, r, hasMetrics, why] of cases) {
    const verdict = judgeLoad(r, hasMetrics, NOW, 15_000);
    assert.equal(verdict.usable ? undefined : verdict.why, why, what);
  }
});

test('loadScore: running + 2 x waiting + requests sent since the scrape + KV use; degraded = in flight', () => {
  const vllm = node('v', { kind: 'vllm' });
  const ollama = node('o', { kind: 'ollama' });
  const snapshot = withLoads(snapshotOf([vllm, ollama], { v: 5, o: 3 }), { v: reading(2, 3, 0, 4, 0.5) });
  // 2 running + 2 x 3 waiting + (5 - 4) sent since + 0.5 KV.
  assert.deepEqual(loadScore(vllm, snapshot, 15_000), { score: 9.5, degraded: undefined });
  assert.deepEqual(loadScore(ollama, snapshot, 15_000), { score: 3, degraded: 'kind exports no load metrics' });
});

test('least-loaded avoids the node with a deep waiting queue, and says why in its reason and notes', () => {
  const nodes = [node('deep', { kind: 'vllm' }), node('calm', { kind: 'vllm' }), node('ollama', { kind: 'ollama' })];
  const snapshot = withLoads(snapshotOf(nodes, { ollama: 2 }), { deep: reading(1, 20), calm: reading(1, 0) });
  const policy = createPolicy('least-loaded', policyContext(Math.random));
  const choice = policy.choose(request('m', { policy: 'least-loaded' }), nodes, snapshot);
  assert.equal(choice?.node.spec.name, 'calm');
  assert.deepEqual(choice?.scores, [41, 1, 2]);
  assert.deepEqual(choice?.notes, [undefined, undefined, 'kind exports no load metrics']);
  assert.equal(choice?.reason, 'lowest load 1');
});

test('least-loaded with stale figures everywhere is least-in-flight, and the reason says so', () => {
  const nodes = [node('a', { kind: 'vllm' }), node('b', { kind: 'vllm' })];
  const snapshot = withLoads(snapshotOf(nodes, { a: 1, b: 0 }), { a: reading(0, 0, 60_000), b: reading(9, 9, 60_000) });
  const choice = createPolicy('least-loaded', policyContext(Math.random)).choose(request('m'), nodes, snapshot);
  assert.equal(choice?.node.spec.name, 'b');
  assert.equal(choice?.reason, 'lowest load 0 (in flight only: load metrics stale (60s old))');
});
