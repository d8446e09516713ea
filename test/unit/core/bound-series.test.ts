// Bound series (issue 28: what a request does not need costs nothing): per-request counter and
// histogram updates find their series without prom-client's label objects and hashing, and the
// scrape reads exactly what prom-client's own inc/observe would have made.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Histogram, Registry } from 'prom-client';
import { BoundCounter, BoundHistogram } from '#src/core/bound-series.ts';

const BUCKETS = [0.005, 0.025, 0.1, 1];
const OBSERVED: readonly (readonly [string, string, number])[] = [
  ['m1', '/v1/chat/completions', 0.004],
  ['m2', '/v1/chat/completions', 0.005],
  ['m1', '/v1/chat/completions', 0.3],
  ['m1', '/v1/embeddings', 7],
  ['m"x\\', '/v1/chat/completions', 0],
];

test("a bound counter and histogram scrape as prom-client's own, label escaping and zero counts included", async () => {
  const ours = new Registry();
  const theirs = new Registry();
  const counter = new BoundCounter({ name: 'c_total', help: 'counts', labelNames: ['model', 'endpoint'], registers: [ours] });
  const histogram = new BoundHistogram({
    name: 'h_seconds',
    help: 'times',
    labelNames: ['model', 'endpoint'],
    buckets: BUCKETS,
    registers: [ours],
  });
  const plainCounter = new Counter({ name: 'c_total', help: 'counts', labelNames: ['model', 'endpoint'], registers: [theirs] });
  const plainHistogram = new Histogram({
    name: 'h_seconds',
    help: 'times',
    labelNames: ['model', 'endpoint'],
    buckets: BUCKETS,
    registers: [theirs],
  });
  const step = (from: number, to: number): void => {
    for (const [model, endpoint, value] of OBSERVED.slice(from, to)) {
      counter.inc(Math.round(value), model, endpoint);
      histogram.observe(value, model, endpoint);
      plainCounter.inc({ model, endpoint }, Math.round(value));
      plainHistogram.observe({ model, endpoint }, value);
    }
  };
  step(0, 3);
  assert.equal(await ours.metrics(), await theirs.metrics());
  step(3, OBSERVED.length);
  assert.equal(await ours.metrics(), await theirs.metrics(), 'after a second scrape: increments since the first added once');
  assert.deepEqual(await ours.getMetricsAsJSON(), await theirs.getMetricsAsJSON());
});

test('a bound series names its labels in order: a wrong count of values is an error', () => {
  const counter = new BoundCounter({ name: 'c2_total', help: 'counts', labelNames: ['a', 'b'], registers: [new Registry()] });
  assert.throws(() => counter.inc(1, 'only one'), /expected 2 label values \(a, b\), got 1/);
  assert.throws(() => counter.inc(-1, 'x', 'y'), /finite number ≥ 0/);
});
