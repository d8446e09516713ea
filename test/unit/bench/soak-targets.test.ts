// The soak as a bench row (issue 42): its verdict from the samples (flat = the last third of the
// samples after warm-up within 10 % of the first third) and the target row it fills (flat and
// ≤ 120 MB; n/a when it did not run or ran too briefly for a verdict).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { soakVerdict, type SoakResult, type SoakSample } from '../../../bench/soak.ts';
import { issue28Checks } from '../../../bench/targets-28.ts';

const MiB = 1_048_576;
const samples = (rssMiB: readonly number[], everyS = 10): SoakSample[] =>
  rssMiB.map((rss, i) => ({
    atSeconds: (i + 1) * everyS,
    rssBytes: rss * MiB,
    heapUsedBytes: 20 * MiB,
    requests: i * 100,
    errors: 0,
  }));

const soakRow = (soak: SoakResult | undefined) =>
  issue28Checks({ proxy: [], added: [], routes: [], control: undefined, lean: undefined, tails: undefined, soak }).find((c) =>
    c.goal.includes('soak'),
  );

const resultOf = (rssMiB: readonly number[], minutes: number): SoakResult => {
  const s = samples(rssMiB);
  return {
    minutes,
    concurrency: 8,
    gatewayFlags: '',
    samples: s,
    outcomes: {},
    requests: 1000,
    errors: 0,
    verdict: soakVerdict(s, minutes * 60_000),
  };
};

test('flat: the last third within 10 % of the first, after the warm-up (at least 60 s)', () => {
  const flat = soakVerdict(samples([200, 150, 100, 100, 101, 102, 103, 104, 105]), 90_000);
  assert.equal(flat?.flat, true, 'the warm-up samples (≤ 60 s) do not count');
  assert.equal(flat?.warmUpSeconds, 60);
  assert.equal(flat?.maxRssBytes, 105 * MiB);
  assert.equal(soakVerdict(samples([100, 100, 100, 100, 100, 100, 100, 120, 130, 140]), 100_000)?.flat, false);
  assert.equal(soakVerdict(samples([100, 100, 100, 100, 100, 100]), 60_000), undefined, 'too few samples after warm-up');
});

test('the target row: met when flat and at most 120 MB; n/a when not run or too short', () => {
  assert.equal(soakRow(undefined)?.met, undefined);
  assert.equal(soakRow(resultOf([100, 100, 100, 100, 100, 100, 100, 101, 102, 101], 2))?.met, true);
  assert.equal(soakRow(resultOf([150, 150, 150, 150, 150, 150, 150, 151, 152, 151], 2))?.met, false, 'flat but above 120 MB');
  assert.equal(soakRow(resultOf([100, 100, 100, 100, 100, 100, 100, 130, 140, 150], 2))?.met, false, 'growing');
  assert.equal(soakRow(resultOf([100, 100, 100], 1))?.met, undefined, 'no verdict');
});
