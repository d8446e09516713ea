// What a node's answers teach (capacity/learned-figures.ts): the holder a node's record keeps — every
// answer is learned, the published figure (what the view shows) changes only when the rule says it
// moved enough, and the models learned per node are bounded —, the token ratio and the decode rate.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DECODE_MIN_SAMPLES,
  DECODE_RATE_LEARNING,
  DECODE_RATE_TTL_MS,
  decodeChanged,
  fleetRatio,
  LearnedFigures,
  MAX_BYTES_PER_TOKEN,
  MAX_LEARNED_RATIOS,
  observeDecode,
  observeRatio,
  ratioChanged,
  TOKEN_RATIO_LEARNING,
  TOKEN_RATIO_MIN_SAMPLES,
  TOKEN_RATIO_TTL_MS,
  tokensPerSecond,
  usableDecode,
  usableRatio,
  widestRatio,
  type DecodeRate,
  type DecodeSample,
  type RatioSample,
  type TokenRatio,
} from '#src/capacity/index.ts';

const T0 = 1_700_000_000_000;

test('decode rates: learned per model, published when it changed', () => {
  const rates = new LearnedFigures<DecodeRate, DecodeSample>(DECODE_RATE_LEARNING);
  assert.equal(rates.learn('m', { tokens: 2, decodeMs: 100 }, T0), false, 'nothing learned from too short an answer');
  assert.deepEqual(rates.published, {});
  assert.equal(rates.learn('m', { tokens: 50, decodeMs: 1_000, firstTokenMs: 100 }, T0), true);
  assert.equal(rates.published.m?.samples, 1);
  const shown = rates.published;
  assert.equal(
    rates.learn('m', { tokens: 50, decodeMs: 1_000, firstTokenMs: 100 }, T0 + 1),
    false,
    'the same speed: the view stays',
  );
  assert.equal(rates.published, shown, 'the published figures are the same object');
  assert.equal(rates.learn('m', { tokens: 50, decodeMs: 1_000, firstTokenMs: 100 }, T0 + 2), true, 'usable now: published');
  assert.equal(rates.published.m?.samples, 3, 'the unpublished answer was learned too');
});

test('token ratios: published once usable, and no more models than the bound', () => {
  const ratios = new LearnedFigures<TokenRatio, RatioSample>(TOKEN_RATIO_LEARNING);
  const sample: RatioSample = { bytes: 4_000, promptTokens: 1_000, templateTokens: 8 };
  assert.equal(ratios.learn('m', sample, T0), true, 'the first envelope is published');
  for (let i = 1; i < TOKEN_RATIO_MIN_SAMPLES - 1; i++) assert.equal(ratios.learn('m', sample, T0 + i), false);
  assert.equal(ratios.learn('m', sample, T0 + TOKEN_RATIO_MIN_SAMPLES), true, 'usable now: published');
  assert.equal(ratios.published.m?.samples, TOKEN_RATIO_MIN_SAMPLES);
  for (let i = 1; i < MAX_LEARNED_RATIOS; i++) ratios.learn(`m${i}`, sample, T0);
  assert.equal(Object.keys(ratios.published).length, MAX_LEARNED_RATIOS);
  assert.equal(ratios.learn('one-too-many', sample, T0), false, 'a model past the bound is not learned');
  assert.equal(ratios.published['one-too-many'], undefined);
});

// The learned bytes-per-token envelope (issue 21 item 1): bounded, widened at once by a new
// extreme, pulled back slowly by ordinary answers, forgotten after its TTL, published only on change.
const RATIO_T0 = 1_000_000;
const sample = (bytes: number, promptTokens: number, templateTokens = 0) => ({ bytes, promptTokens, templateTokens });
const ratio = (low: number, high: number, samples = TOKEN_RATIO_MIN_SAMPLES, atMs = RATIO_T0): TokenRatio => ({
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
    prior: ratio(1.5, 9, 50, RATIO_T0),
    s: sample(3000, 1000),
    now: RATIO_T0 + TOKEN_RATIO_TTL_MS,
    want: { low: 3, high: 3, samples: 1 },
  },
];

for (const c of OBSERVE) {
  test(`observeRatio: ${c.name}`, () => {
    const next = observeRatio(c.prior, c.s, c.now ?? RATIO_T0 + 1);
    if (c.want === 'unchanged') return assert.equal(next, c.prior);
    assert.ok(next !== undefined);
    for (const [key, value] of Object.entries(c.want))
      assert.ok(Math.abs((next as unknown as Record<string, number>)[key]! - value) < 1e-9, `${key}: ${JSON.stringify(next)}`);
  });
}

test('usableRatio: only after enough answers, and only while recent', () => {
  assert.equal(usableRatio(ratio(3, 4, TOKEN_RATIO_MIN_SAMPLES - 1), RATIO_T0), undefined);
  assert.deepEqual(usableRatio(ratio(3, 4), RATIO_T0), ratio(3, 4));
  assert.equal(usableRatio(ratio(3, 4), RATIO_T0 + TOKEN_RATIO_TTL_MS), undefined);
  assert.equal(usableRatio(undefined, RATIO_T0), undefined);
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
    ratioChanged(ratio(3, 4, 9, RATIO_T0), ratio(3, 4, 10, RATIO_T0 + TOKEN_RATIO_TTL_MS / 4)),
    true,
    'refreshed before it could expire',
  );
});

test('widestRatio and fleetRatio: the most cautious envelope among the nodes listing the model', () => {
  const wide = widestRatio([ratio(3, 4), ratio(2, 3.5), undefined, ratio(1, 9, 1)], RATIO_T0);
  assert.deepEqual(wide && { low: wide.low, high: wide.high }, { low: 2, high: 4 }, 'unusable envelopes do not count');
  const views = [
    { modelsById: new Map([['m', {}]]), tokenRatios: { m: ratio(3, 4) } },
    { modelsById: new Map([['other', {}]]), tokenRatios: { m: ratio(1, 50) } },
    { modelsById: new Map([['m', {}]]) },
  ];
  const fleet = fleetRatio(views, 'm', RATIO_T0);
  assert.deepEqual(fleet && { low: fleet.low, high: fleet.high }, { low: 3, high: 4 });
  assert.equal(fleetRatio(views, 'nobody', RATIO_T0), undefined);
});

// The learned decode rate: how fast a node generates a model's tokens.
test('observeDecode: what one answer teaches, table', () => {
  const prior: DecodeRate = { tokens: 100, decodeMs: 1_000, firstTokenMs: 400, samples: 5, atMs: T0 };
  const rows: {
    name: string;
    prior: DecodeRate | undefined;
    sample: DecodeSample;
    now: number;
    want: DecodeRate | undefined | 'prior';
  }[] = [
    {
      name: 'first stream',
      prior: undefined,
      sample: { tokens: 50, decodeMs: 500, firstTokenMs: 200 },
      now: T0,
      want: { tokens: 50, decodeMs: 500, firstTokenMs: 200, samples: 1, atMs: T0 },
    },
    {
      name: 'first whole answer: no first-token time',
      prior: undefined,
      sample: { tokens: 50, decodeMs: 2_000 },
      now: T0,
      want: { tokens: 50, decodeMs: 2_000, firstTokenMs: undefined, samples: 1, atMs: T0 },
    },
    {
      name: 'decayed sums and mean',
      prior,
      sample: { tokens: 100, decodeMs: 500, firstTokenMs: 200 },
      now: T0 + 1,
      want: { tokens: 180, decodeMs: 1_300, firstTokenMs: 360, samples: 6, atMs: T0 + 1 },
    },
    {
      name: 'a whole answer keeps the first-token time',
      prior,
      sample: { tokens: 100, decodeMs: 500 },
      now: T0 + 1,
      want: { tokens: 180, decodeMs: 1_300, firstTokenMs: 400, samples: 6, atMs: T0 + 1 },
    },
    { name: 'too few tokens teach nothing', prior, sample: { tokens: 3, decodeMs: 500 }, now: T0 + 1, want: 'prior' },
    {
      name: 'a burst (too short a decode) teaches nothing',
      prior,
      sample: { tokens: 50, decodeMs: 5 },
      now: T0 + 1,
      want: 'prior',
    },
    { name: 'NaN teaches nothing', prior, sample: { tokens: Number.NaN, decodeMs: 500 }, now: T0 + 1, want: 'prior' },
    {
      name: 'faster than any node: taken at the fastest (5,000/s)',
      prior: undefined,
      sample: { tokens: 1_000, decodeMs: 20 },
      now: T0,
      want: { tokens: 1_000, decodeMs: 200, firstTokenMs: undefined, samples: 1, atMs: T0 },
    },
    {
      name: 'an expired rate starts over',
      prior,
      sample: { tokens: 10, decodeMs: 100, firstTokenMs: 50 },
      now: T0 + DECODE_RATE_TTL_MS,
      want: { tokens: 10, decodeMs: 100, firstTokenMs: 50, samples: 1, atMs: T0 + DECODE_RATE_TTL_MS },
    },
    {
      name: 'a negative first-token time is not one',
      prior: undefined,
      sample: { tokens: 10, decodeMs: 100, firstTokenMs: -5 },
      now: T0,
      want: { tokens: 10, decodeMs: 100, firstTokenMs: undefined, samples: 1, atMs: T0 },
    },
  ];
  for (const row of rows) {
    const got = observeDecode(row.prior, row.sample, row.now);
    if (row.want === 'prior') assert.equal(got, row.prior, row.name);
    else assert.deepEqual(got, row.want, row.name);
  }
});

test('usableDecode: enough answers, recent enough, table', () => {
  const rate = (samples: number, atMs: number): DecodeRate => ({
    tokens: 10,
    decodeMs: 100,
    firstTokenMs: undefined,
    samples,
    atMs,
  });
  const rows: [string, DecodeRate | undefined, number, boolean][] = [
    ['none', undefined, T0, false],
    ['too few answers', rate(DECODE_MIN_SAMPLES - 1, T0), T0, false],
    ['enough', rate(DECODE_MIN_SAMPLES, T0), T0, true],
    ['just before it expires', rate(DECODE_MIN_SAMPLES, T0), T0 + DECODE_RATE_TTL_MS - 1, true],
    ['expired', rate(DECODE_MIN_SAMPLES, T0), T0 + DECODE_RATE_TTL_MS, false],
  ];
  for (const [name, given, now, usable] of rows) assert.equal(usableDecode(given, now) !== undefined, usable, name);
  assert.equal(tokensPerSecond({ tokens: 50, decodeMs: 1_000 }), 50);
  assert.equal(tokensPerSecond({ tokens: 50, decodeMs: 0 }), 0);
});

test('decodeChanged: only a real change is published, table', () => {
  const base: DecodeRate = { tokens: 100, decodeMs: 1_000, firstTokenMs: 400, samples: 5, atMs: T0 };
  const rows: [string, DecodeRate | undefined, DecodeRate | undefined, boolean][] = [
    ['both none', undefined, undefined, false],
    ['first', undefined, base, true],
    ['same figures', base, { ...base, samples: 6, atMs: T0 + 1 }, false],
    ['rate moved 10%', base, { ...base, tokens: 110 }, true],
    ['rate moved 1%', base, { ...base, tokens: 101 }, false],
    ['first-token time learned', { ...base, firstTokenMs: undefined }, base, true],
    ['first-token time moved 10%', base, { ...base, firstTokenMs: 440 }, true],
    ['became usable', { ...base, samples: DECODE_MIN_SAMPLES - 1 }, { ...base, samples: DECODE_MIN_SAMPLES }, true],
    ['refreshed after a quarter of its lifetime', base, { ...base, atMs: T0 + DECODE_RATE_TTL_MS / 4 }, true],
  ];
  for (const [name, prior, next, changed] of rows) assert.equal(decodeChanged(prior, next), changed, name);
});
