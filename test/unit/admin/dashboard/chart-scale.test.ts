// The Traffic charts' scale (src/admin/dashboard/static/chart-scale.js, the page's own module, pure):
// the unit for the largest value, ticks on whole numbers of it, their labels, the legend's values,
// the window's buckets with the idle ones in place, and the newest bucket with a value.
import { test } from 'node:test';
import assert from 'node:assert/strict';

// A browser module in plain JavaScript: loaded by its URL (it has no type declarations).
const scale = await import(new URL('../../../../src/admin/dashboard/static/chart-scale.js', import.meta.url).href);

interface Unit {
  readonly suffix: string;
  readonly per: number;
}
const unitFor = scale.unitFor as (kind: string, max: number) => Unit;
const ticksFor = scale.ticksFor as (max: number, unit: Unit, count?: number) => { top: number; splits: number[] };
const tickLabel = scale.tickLabel as (value: number, unit: Unit) => string;
const valueLabel = scale.valueLabel as (kind: string, value: number | null, unit: Unit) => string;
const windowBuckets = scale.windowBuckets as (
  points: readonly (readonly number[])[],
  now: number,
  windowMs: number,
  bucketMs: number,
) => [number, readonly number[] | undefined][];
const latestIndex = scale.latestIndex as (columns: readonly (readonly (number | null)[])[]) => number | null;
const loneIndices = scale.loneIndices as (values: readonly (number | null)[]) => number[];

const labels = (kind: string, max: number, count = 4): string[] => {
  const unit = unitFor(kind, max);
  return ticksFor(max, unit, count).splits.map((s) => tickLabel(s, unit));
};

test('durations read in ms up to 10,000 ms, in whole seconds above; every tick a whole number', () => {
  const cases: [number, string[]][] = [
    [0, ['0 ms', '1 ms']],
    [7, ['0 ms', '2 ms', '4 ms', '6 ms', '8 ms']],
    [169, ['0 ms', '50 ms', '100 ms', '150 ms', '200 ms']],
    [2_300, ['0 ms', '1,000 ms', '2,000 ms', '3,000 ms']],
    [10_000, ['0 ms', '5,000 ms', '10,000 ms']],
    [10_001, ['0 s', '5 s', '10 s', '15 s']],
    [20_000, ['0 s', '5 s', '10 s', '15 s', '20 s']],
    [23_283, ['0 s', '10 s', '20 s', '30 s']],
    [1_300_000, ['0 s', '500 s', '1,000 s', '1,500 s']],
  ];
  for (const [max, expected] of cases) assert.deepEqual(labels('ms', max), expected, `max ${max} ms`);
});

test('rates read per minute below 10/s (whole numbers for a quiet gateway), per second from 10/s', () => {
  assert.deepEqual(labels('rate', 0.1), ['0/min', '2/min', '4/min', '6/min']);
  assert.deepEqual(labels('rate', 2.9), ['0/min', '50/min', '100/min', '150/min', '200/min']);
  assert.deepEqual(labels('rate', 45), ['0/s', '20/s', '40/s', '60/s']);
});

test('the top tick reaches the largest value with at most `count` steps', () => {
  for (const max of [1, 3, 9, 11, 99, 101, 999, 9_999, 10_001, 19_999, 86_400_000]) {
    for (const count of [1, 2, 3, 4, 6]) {
      const unit = unitFor('ms', max);
      const { top, splits } = ticksFor(max, unit, count);
      assert.ok(top >= max, `max ${max}: top ${top}`);
      assert.ok(splits.length - 1 <= count, `max ${max}, count ${count}: ${splits.length - 1} steps`);
      for (const s of splits)
        assert.ok(Number.isInteger(Math.round((s / unit.per) * 1e9) / 1e9), `${s} is whole in ${unit.suffix}`);
    }
  }
});

test('legend values: ms whole, seconds to a tenth above 10,000 ms, rates in the chart unit, none as a dash', () => {
  const ms = unitFor('ms', 0);
  assert.equal(valueLabel('ms', 169, ms), '169 ms');
  assert.equal(valueLabel('ms', 9_999, ms), '9,999 ms');
  assert.equal(valueLabel('ms', 23_283, unitFor('ms', 23_283)), '23.3 s');
  assert.equal(valueLabel('ms', null, ms), '—');
  assert.equal(valueLabel('rate', 0.9, unitFor('rate', 2)), '54/min');
  assert.equal(valueLabel('rate', 12.25, unitFor('rate', 12.25)), '12.3/s');
});

test('the window has every bucket: the idle ones are in place (undefined), so a chart leaves them as gaps', () => {
  const points = [
    [100_000, 3, 0, 5, 6, 1, 2],
    [130_000, 2, 0, 20_000, 23_000, 19_000, 22_000],
  ];
  const buckets = windowBuckets(points, 145_000, 60_000, 10_000);
  assert.deepEqual(
    buckets.map(([start, p]) => [start, p?.[1] ?? null]),
    [
      [80_000, null],
      [90_000, null],
      [100_000, 3],
      [110_000, null],
      [120_000, null],
      [130_000, 2],
      [140_000, null],
    ],
  );
});

test('the newest bucket with a value in any series, and the buckets alone between idle ones', () => {
  assert.equal(
    latestIndex([
      [1, null, 3, null],
      [null, 2, null, null],
    ]),
    2,
  );
  assert.equal(
    latestIndex([
      [null, null],
      [null, null],
    ]),
    null,
  );
  assert.deepEqual(loneIndices([5, null, 7, 8, null, 9]), [0, 5]);
  assert.deepEqual(loneIndices([null, null]), []);
});
