// A node's learned figures, kept in the registry's record: every answer is learned, the published
// figure (what the view shows) changes only when capacity/'s rule says it moved enough, and the
// models learned per node are bounded. (Moved here from decode-rate.test.ts's recordDecode case:
// the state is the registry's; capacity/ keeps only the rules.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DECODE_RATE_LEARNING,
  MAX_LEARNED_RATIOS,
  TOKEN_RATIO_LEARNING,
  TOKEN_RATIO_MIN_SAMPLES,
  type DecodeRate,
  type DecodeSample,
  type RatioSample,
  type TokenRatio,
} from '#src/capacity/index.ts';
import { LearnedFigures } from '#src/nodes/learned-figures.ts';

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
