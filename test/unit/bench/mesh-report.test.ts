import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderMeshMarkdown, type MeshBenchResult } from '../../../bench/mesh.ts';

const base: MeshBenchResult = {
  generatedAt: '2026-12-01T00:00:00.000Z',
  sites: 32,
  heartbeatMs: 2_000,
  freshnessMs: 6_000,
  problems: [],
};

test('the mesh report shows what was measured and names the phase that did not finish', () => {
  const text = renderMeshMarkdown({
    ...base,
    startSeconds: 90.5,
    startupConvergence: { fromReadyMs: 4_100, fromSpawnMs: 7_000, medianMs: 2_000, heartbeats: 2.06, stillFreshAfter: 32 },
    problems: [{ phase: 'steady state', problem: 'TimeoutError: The operation was aborted due to timeout' }],
  });
  assert.match(text, /\| start 32 gateways \(4 at a time\) \| 90\.5 s \|/);
  assert.match(
    text,
    /cold-start convergence: last gateway started → every site sees every other fresh \| 4100 ms = 2\.1 heartbeats \(within the 3-heartbeat bound, 6000 ms\); from its spawn 7000 ms; median site 2000 ms; 32 of 32 sites still saw every other fresh when asked right after \|/,
  );
  assert.match(text, /gossip bytes per site, in \+ out \(mean \/ max\) \| not measured \(see below\) \|/);
  assert.match(text, /- steady state: TimeoutError: The operation was aborted due to timeout/);
});

test('a convergence over the bound is marked so', () => {
  const text = renderMeshMarkdown({
    ...base,
    startupConvergence: { fromReadyMs: 48_000, fromSpawnMs: 50_000, medianMs: 30_000, heartbeats: 24, stillFreshAfter: 30 },
  });
  assert.match(text, /48000 ms = 24\.0 heartbeats \(\*\*over\*\* the 3-heartbeat bound/);
  assert.doesNotMatch(text, /did not finish/);
});
