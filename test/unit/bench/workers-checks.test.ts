// The workers rows' "throughput scales" check compares workers = N with the one-worker gateway measured
// beside it, and only when the two cells ran under alike other load: on 2 cores, other work takes the CPU
// the gateway would use, and a ratio across unequal loads measures the load (bench-run-0045: 0.19×).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { workersChecks } from '../../../bench/workers-bench.ts';
import type { Measurement, TargetName } from '../../../bench/proxy-bench.ts';

const row = (target: TargetName, requestsPerSecond: number, otherCpuPercent: number, proxyCpuPercent: number): Measurement => ({
  workload: 'json',
  concurrency: 64,
  target,
  requests: requestsPerSecond * 3,
  requestsPerSecond,
  p50Ms: 1,
  p99Ms: 2,
  errors: 0,
  proxyCpuUsPerRequest: (proxyCpuPercent * 1e4) / requestsPerSecond,
  proxyCpuPercent,
  proxyPeakRssMB: 100,
  peakRssScope: 'run',
  upstreamCpuUsPerRequest: 30,
  upstreamCpuPercent: 20,
  loadGeneratorCpuPercent: 10,
  otherCpuPercent,
});

const scales = (rows: Measurement[]) =>
  workersChecks(rows, 2).find((c) => c.goal.startsWith('cores used: workers = 2 vs 1, c=64, json'));

test('a workers cell under 139 % other load against a one-worker cell under 1 % is not judged, with both loads said', () => {
  // The morning's figures (bench-run-0045): 1,591 vs 8,233 req/s.
  const check = scales([row('switchyard', 8233, 1.16, 110), row('switchyard-w2', 1591, 139, 50.9)]);
  assert.equal(check?.met, undefined, check?.measured);
  assert.match(check?.measured ?? '', /^not judged: other load 139 % vs 1\.16 % of a core; 0\.193 ×/);
});

test('the one-worker gateway measured beside the workers one is the baseline, and alike loads are judged', () => {
  const rows = [row('switchyard', 8233, 1, 110), row('switchyard-w1', 1933, 120, 45), row('switchyard-w2', 1591, 139, 51)];
  const check = scales(rows);
  assert.equal(check?.met, false);
  assert.match(check?.measured ?? '', /^0\.823 × \(1591 vs 1933 req\/s/);
  assert.equal(scales([row('switchyard-w1', 8000, 3, 110), row('switchyard-w2', 8800, 10, 138)])?.met, true);
});
