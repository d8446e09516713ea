import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  binEdgeMs,
  binOf,
  emptyHistogram,
  addSample,
  quantileMs,
  HISTOGRAM_BINS,
} from '#src/admin/dashboard/latency-histogram.ts';
import {
  isErrorAnswer,
  MAX_TRAFFIC_SERIES,
  TRAFFIC_BUCKET_MS,
  TRAFFIC_WINDOW_MS,
  TrafficHistory,
  type FinishedRequest,
} from '#src/admin/dashboard/traffic-history.ts';

const T0 = 1_700_000_000_000;
const req = (over: Partial<FinishedRequest> = {}): FinishedRequest => ({
  model: 'm',
  node: 'n',
  status: 200,
  durationMs: 100,
  firstByteMs: 20,
  brokenError: undefined,
  clientAborted: false,
  ...over,
});

test('what counts as an error: a 5xx answer or one broken midway, never a client that left', () => {
  const table: [Partial<FinishedRequest>, boolean][] = [
    [{ status: 200 }, false],
    [{ status: 429 }, false],
    [{ status: 400 }, false],
    [{ status: 502 }, true],
    [{ status: 200, brokenError: 'reset' }, true],
    [{ status: 502, clientAborted: true }, false],
  ];
  for (const [over, want] of table) assert.equal(isErrorAnswer(req(over)), want, JSON.stringify(over));
});

test('the histogram answers quantiles within one bin (25 %), and clamps its ends', () => {
  assert.equal(binOf(0), 0);
  assert.equal(binOf(-5), 0);
  assert.equal(binOf(1e12), HISTOGRAM_BINS - 1);
  for (const ms of [1.5, 7, 100, 2_500, 60_000])
    assert.ok(binEdgeMs(binOf(ms)) >= ms && binEdgeMs(binOf(ms)) < ms * 1.25 + 1, `${ms}`);
  const h = emptyHistogram();
  assert.equal(quantileMs(h, 0.5), null);
  for (let i = 1; i <= 100; i++) addSample(h, i * 10);
  const p50 = quantileMs(h, 0.5) ?? 0;
  const p99 = quantileMs(h, 0.99) ?? 0;
  assert.ok(p50 >= 500 && p50 <= 625, `p50 ${p50}`);
  assert.ok(p99 >= 990 && p99 <= 1240, `p99 ${p99}`);
});

test('requests land in 10 s buckets, all of them, per model and per node; buckets older than 15 minutes are gone', () => {
  const h = new TrafficHistory();
  h.record(req(), T0);
  h.record(req({ status: 500 }), T0 + 1);
  h.record(req({ node: undefined, firstByteMs: undefined }), T0 + TRAFFIC_BUCKET_MS);
  const all = h.all(T0 + TRAFFIC_BUCKET_MS);
  assert.deepEqual(Object.keys(all).sort(), ['all', 'model:m', 'node:n']);
  assert.equal(all['model:m']?.length, 2);
  assert.deepEqual(
    all.all?.map((p) => p[1]),
    [2, 1],
    'the aggregate counts every request',
  );
  assert.deepEqual(all['model:m']?.[0]?.slice(0, 3), [T0 - (T0 % TRAFFIC_BUCKET_MS), 2, 1]);
  assert.deepEqual(
    all['node:n']?.map((p) => p[1]),
    [2],
  );
  assert.deepEqual(h.all(T0 + TRAFFIC_WINDOW_MS + 2 * TRAFFIC_BUCKET_MS), {});
});

test('the feed gets only the buckets written since it last asked', () => {
  const h = new TrafficHistory();
  h.record(req(), T0);
  assert.deepEqual(Object.keys(h.takeChanged()).sort(), ['all', 'model:m', 'node:n']);
  assert.deepEqual(h.takeChanged(), {});
  h.record(req({ node: undefined }), T0 + 5);
  assert.deepEqual(Object.keys(h.takeChanged()).sort(), ['all', 'model:m']);
});

test('unread changes stay within the window while nobody watches', () => {
  const h = new TrafficHistory();
  for (let t = 0; t < 3 * TRAFFIC_WINDOW_MS; t += TRAFFIC_BUCKET_MS) h.record(req({ node: undefined }), T0 + t);
  const points = h.takeChanged()['model:m'] ?? [];
  assert.ok(points.length <= TRAFFIC_WINDOW_MS / TRAFFIC_BUCKET_MS + 1, `${points.length} buckets kept`);
});

test('at most MAX_TRAFFIC_SERIES series; idle ones make room', () => {
  const h = new TrafficHistory();
  for (let i = 0; i < MAX_TRAFFIC_SERIES + 10; i++) h.record(req({ model: `m${i}`, node: undefined }), T0);
  assert.equal(Object.keys(h.all(T0)).length, MAX_TRAFFIC_SERIES);
  assert.equal(h.droppedSeries(), 11, 'the aggregate holds one of the series');
  h.record(req({ model: 'late', node: undefined }), T0 + TRAFFIC_WINDOW_MS + TRAFFIC_BUCKET_MS);
  assert.deepEqual(Object.keys(h.all(T0 + TRAFFIC_WINDOW_MS + TRAFFIC_BUCKET_MS)).sort(), ['all', 'model:late']);
});

test('traffic history adds in place: a series holds one bucket storage per ring slot, and later windows allocate none', () => {
  const h = new TrafficHistory();
  const slots = TRAFFIC_WINDOW_MS / TRAFFIC_BUCKET_MS + 1;
  for (let t = 0; t < TRAFFIC_WINDOW_MS + 2 * TRAFFIC_BUCKET_MS; t += 1_000) h.record(req(), T0 + t);
  const afterOneWindow = h.allocatedBuckets();
  assert.equal(afterOneWindow, 3 * slots, 'all, model:m and node:n: one per slot, not one per request');
  for (let t = 0; t < 2 * TRAFFIC_WINDOW_MS; t += 1_000) h.record(req(), T0 + TRAFFIC_WINDOW_MS + t);
  assert.equal(h.allocatedBuckets(), afterOneWindow, 'a second and third window reuse the slots');
});

test('buckets over the window read the same as counted one by one: gaps, wrap-around, oldest first', () => {
  const h = new TrafficHistory();
  const counts = new Map<number, number>();
  let now = T0;
  for (let i = 0; i < 400; i++) {
    now += ((i * 7919) % 23) * 1_000 + (i % 5 === 0 ? 60_000 : 0);
    h.record(req({ node: undefined, durationMs: 40 }), now);
    const start = now - (now % TRAFFIC_BUCKET_MS);
    counts.set(start, (counts.get(start) ?? 0) + 1);
    if (i % 37 !== 0) continue;
    const want = [...counts].filter(([start]) => start + TRAFFIC_BUCKET_MS > now - TRAFFIC_WINDOW_MS).sort((a, b) => a[0] - b[0]);
    assert.deepEqual(
      h.all(now)['model:m']?.map((p) => [p[0], p[1]]),
      want,
      `at request ${i}`,
    );
    assert.ok(h.all(now)['model:m']?.every((p) => p[3] !== null && p[3] >= 40 && p[3] <= 50 && p[5] !== null));
  }
});
