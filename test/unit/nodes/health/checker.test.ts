// HealthChecker reloads: a node whose server stays (kept, or relisted for a new key or kind) keeps
// its probe cadence; a new or moved node is probed at once; a removed or moved node's probe stops.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { diffNodes, type NodeSpec } from '#src/config/index.ts';
import { ManualClock } from '#src/core/clock.ts';
import { HealthChecker, type ProbeOutcome } from '#src/nodes/index.ts';
import { spec } from '#test/fixtures/builders.ts';

const INTERVAL_MS = 5_000;

interface Probe {
  readonly node: string;
  readonly url: string;
  readonly signal: AbortSignal;
}

async function startChecker(
  t: TestContext,
  nodes: readonly NodeSpec[],
): Promise<{ checker: HealthChecker; clock: ManualClock; probes: Probe[] }> {
  const clock = new ManualClock();
  const probes: Probe[] = [];
  const checker = new HealthChecker({
    clock,
    intervalMs: INTERVAL_MS,
    // Never answers: the tests look only at which probes start and which are aborted.
    probe: (node, signal) => {
      probes.push({ node: node.name, url: node.url, signal });
      return new Promise<ProbeOutcome>(() => {});
    },
    onProbe: () => {},
  });
  checker.applyChange(diffNodes([], nodes));
  const lifetime = new AbortController();
  t.after(() => lifetime.abort());
  await checker.start(lifetime.signal);
  return { checker, clock, probes };
}

test('a reload keeps the probe of a node on the same server, even with a new key or kind', async (t) => {
  const before = [spec('same'), spec('relisted')];
  const { checker, probes } = await startChecker(t, before);
  const after = [spec('same', { group: 'big' }), spec('relisted', { apiKey: 'sk-new', kind: 'vllm' })];
  checker.applyChange(diffNodes(before, after));
  assert.deepEqual(
    probes.map((p) => p.node),
    ['same', 'relisted'],
    'no new probe',
  );
  assert.equal(
    probes.some((p) => p.signal.aborted),
    false,
  );
});

test("a reload probes a new or moved node at once and stops a removed or moved node's probe", async (t) => {
  const before = [spec('moved'), spec('gone')];
  const { checker, clock, probes } = await startChecker(t, before);
  const after = [spec('moved', { url: 'http://127.0.0.1:2/moved' }), spec('new')];
  checker.applyChange(diffNodes(before, after));
  assert.deepEqual(
    probes.map((p) => `${p.node} ${p.url} ${p.signal.aborted ? 'aborted' : 'running'}`),
    [
      'moved http://127.0.0.1:1/moved aborted',
      'gone http://127.0.0.1:1/gone aborted',
      'moved http://127.0.0.1:2/moved running',
      'new http://127.0.0.1:1/new running',
    ],
  );
  clock.advance(INTERVAL_MS * 3);
  assert.equal(probes.filter((p) => p.node === 'gone').length, 1, 'a removed node is never probed again');
});
