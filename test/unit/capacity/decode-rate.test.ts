import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DECODE_MIN_SAMPLES,
  DECODE_RATE_TTL_MS,
  decodeChanged,
  observeDecode,
  tokensPerSecond,
  usableDecode,
  type DecodeRate,
  type DecodeSample,
} from '#src/capacity/index.ts';

const T0 = 1_700_000_000_000;

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
