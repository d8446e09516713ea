// The learned bytes-per-token envelope (issue 21 item 1): bounded, widened at once by a new
// extreme, pulled back slowly by ordinary answers, forgotten after its TTL, published only on change.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  fleetRatio,
  MAX_BYTES_PER_TOKEN,
  observeRatio,
  ratioChanged,
  TOKEN_RATIO_MIN_SAMPLES,
  TOKEN_RATIO_TTL_MS,
  usableRatio,
  widestRatio,
  type TokenRatio,
} from '#src/capacity/index.ts';

const T0 = 1_000_000;
const sample = (bytes: number, promptTokens: number, templateTokens = 0) => ({ bytes, promptTokens, templateTokens });
const ratio = (low: number, high: number, samples = TOKEN_RATIO_MIN_SAMPLES, atMs = T0): TokenRatio => ({
  low,
  high,
  samples,
  atMs,
});

const OBSERVE: readonly {
  name: string;
  prior: TokenRatio | undefined;
  s: ReturnType<typeof sample>;
  now?: number;
  want: Partial<TokenRatio> | 'unchanged';
}[] = [
  {
    name: 'a first answer: low counts the template, high leaves it out',
    prior: undefined,
    s: sample(4000, 1000, 24),
    want: { low: 4, high: 4000 / 976, samples: 1 },
  },
  { name: 'a short prompt teaches nothing', prior: undefined, s: sample(100, 20), want: 'unchanged' },
  { name: 'no count teaches nothing', prior: ratio(3, 4), s: sample(4000, 0), want: 'unchanged' },
  {
    name: 'a new extreme widens the envelope at once',
    prior: ratio(3, 4),
    s: sample(4000, 2000),
    want: { low: 2, high: 4 - (4 - 2) * 0.05 },
  },
  {
    name: 'an answer inside pulls both edges towards it by the weight',
    prior: ratio(2, 5),
    s: sample(3500, 1000),
    want: { low: 2 + 1.5 * 0.05, high: 5 - 1.5 * 0.05 },
  },
  { name: 'bounded below by one byte per token', prior: undefined, s: sample(300, 600), want: { low: 1, high: 1 } },
  {
    name: 'bounded above by the longest token',
    prior: undefined,
    s: sample(100_000, 10),
    want: { low: MAX_BYTES_PER_TOKEN, high: MAX_BYTES_PER_TOKEN },
  },
  {
    name: 'an envelope past its TTL starts over',
    prior: ratio(1.5, 9, 50, T0),
    s: sample(3000, 1000),
    now: T0 + TOKEN_RATIO_TTL_MS,
    want: { low: 3, high: 3, samples: 1 },
  },
];

for (const c of OBSERVE) {
  test(`observeRatio: ${c.name}`, () => {
    const next = observeRatio(c.prior, c.s, c.now ?? T0 + 1);
    if (c.want === 'unchanged') return assert.equal(next, c.prior);
    assert.ok(next !== undefined);
    for (const [key, value] of Object.entries(c.want))
      assert.ok(Math.abs((next as unknown as Record<string, number>)[key]! - value) < 1e-9, `${key}: ${JSON.stringify(next)}`);
  });
}

test('usableRatio: only after enough answers, and only while recent', () => {
  assert.equal(usableRatio(ratio(3, 4, TOKEN_RATIO_MIN_SAMPLES - 1), T0), undefined);
  assert.deepEqual(usableRatio(ratio(3, 4), T0), ratio(3, 4));
  assert.equal(usableRatio(ratio(3, 4), T0 + TOKEN_RATIO_TTL_MS), undefined);
  assert.equal(usableRatio(undefined, T0), undefined);
});

test('ratioChanged: publishing only what matters to routing', () => {
  assert.equal(ratioChanged(undefined, ratio(3, 4)), true);
  assert.equal(ratioChanged(ratio(3, 4), ratio(3.01, 4.01)), false, 'a small move keeps the view');
  assert.equal(ratioChanged(ratio(3, 4), ratio(3.2, 4)), true, 'a real move publishes');
  assert.equal(
    ratioChanged(ratio(3, 4, TOKEN_RATIO_MIN_SAMPLES - 1), ratio(3, 4, TOKEN_RATIO_MIN_SAMPLES)),
    true,
    'becoming usable publishes',
  );
  assert.equal(
    ratioChanged(ratio(3, 4, 9, T0), ratio(3, 4, 10, T0 + TOKEN_RATIO_TTL_MS / 4)),
    true,
    'refreshed before it could expire',
  );
});

test('widestRatio and fleetRatio: the most cautious envelope among the nodes listing the model', () => {
  const wide = widestRatio([ratio(3, 4), ratio(2, 3.5), undefined, ratio(1, 9, 1)], T0);
  assert.deepEqual(wide && { low: wide.low, high: wide.high }, { low: 2, high: 4 }, 'unusable envelopes do not count');
  const views = [
    { modelsById: new Map([['m', {}]]), tokenRatios: { m: ratio(3, 4) } },
    { modelsById: new Map([['other', {}]]), tokenRatios: { m: ratio(1, 50) } },
    { modelsById: new Map([['m', {}]]) },
  ];
  const fleet = fleetRatio(views, 'm', T0);
  assert.deepEqual(fleet && { low: fleet.low, high: fleet.high }, { low: 3, high: 4 });
  assert.equal(fleetRatio(views, 'nobody', T0), undefined);
});
