// Proven and learned prompt bounds (issue 21 item 1), the sample an answer teaches, the figure a
// refusal quotes, and the property that matters: the proven bounds hold the simulated tokenizer's
// count for English, code and CJK alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_BYTES_PER_TOKEN, TOKEN_RATIO_MIN_SAMPLES, type TokenRatio } from '#src/capacity/index.ts';
import {
  chatBytesBounds,
  exactBounds,
  LEARNED_SAFETY,
  promptBounds,
  ratioSample,
  refusalFigure,
} from '#src/proxy/request/prompt-bounds.ts';
import { promptText } from '#src/proxy/request/prompt-size.ts';
import { chatPromptTokens } from '#src/sim/tokenizer.ts';
import { chatOfLanguage, LANGUAGES } from '#test/fixtures/prompt-languages.ts';

const chat = (content: string) => promptText('/v1/chat/completions', { messages: [{ role: 'user', content }] });
const ratio = (low: number, high: number): TokenRatio => ({ low, high, samples: TOKEN_RATIO_MIN_SAMPLES, atMs: 0 });
const TEMPLATE = 24; // 16 + 8 × one message

const BOUNDS: readonly {
  name: string;
  bytes: number;
  ratio: TokenRatio | undefined;
  lower: number;
  upper: number;
  learned: boolean;
}[] = [
  {
    name: 'proven only: bytes / 256 .. bytes + template',
    bytes: 10_000,
    ratio: undefined,
    lower: Math.ceil(10_000 / MAX_BYTES_PER_TOKEN),
    upper: 10_000 + TEMPLATE,
    learned: false,
  },
  {
    name: 'learned: bytes × 2 / low .. bytes / (high × 2)',
    bytes: 10_000,
    ratio: ratio(3, 4),
    lower: Math.floor(10_000 / (4 * LEARNED_SAFETY)),
    upper: Math.ceil((10_000 * LEARNED_SAFETY) / 3) + TEMPLATE,
    learned: true,
  },
  {
    name: 'a learned edge looser than the proof is not used',
    bytes: 10_000,
    ratio: ratio(1, 200),
    lower: Math.ceil(10_000 / MAX_BYTES_PER_TOKEN),
    upper: 10_000 + TEMPLATE,
    learned: false,
  },
  { name: 'an empty prompt: the template only', bytes: 0, ratio: ratio(3, 4), lower: 0, upper: TEMPLATE, learned: false },
];

for (const c of BOUNDS) {
  test(`promptBounds: ${c.name}`, () => {
    const bounds = chatBytesBounds(c.bytes, c.ratio);
    assert.deepEqual(bounds, { lower: c.lower, upper: c.upper, exact: false, learned: c.learned });
    assert.ok(bounds.lower <= bounds.upper);
  });
}

test('given token ids count one each in both bounds', () => {
  const text = promptText('/v1/completions', { prompt: [1, 2, 3] });
  assert.deepEqual(promptBounds(text, undefined), { lower: 3, upper: 3, exact: false, learned: false });
});

test('the proven bounds hold the simulated count of English, code and CJK, short and long', () => {
  for (const language of LANGUAGES) {
    for (const tokens of [10, 300, 4000]) {
      const { body } = chatOfLanguage('m', language, tokens);
      const messages = body.messages as { content: string }[];
      const bounds = promptBounds(chat(messages[0]?.content ?? ''), undefined);
      const count = chatPromptTokens(messages);
      assert.ok(
        bounds.lower <= count && count <= bounds.upper,
        `${language} ${tokens}: ${bounds.lower} <= ${count} <= ${bounds.upper}`,
      );
    }
  }
});

test('learned from one language, the bounds with their safety factor still hold the others', () => {
  // The envelope English, code and CJK answers teach together (sim: about 3.5, 2 and 3 bytes per token).
  const envelope = ratio(1.9, 3.6);
  for (const language of LANGUAGES) {
    const { body } = chatOfLanguage('m', language, 3000);
    const messages = body.messages as { content: string }[];
    const bounds = promptBounds(chat(messages[0]?.content ?? ''), envelope);
    const count = chatPromptTokens(messages);
    assert.ok(bounds.lower <= count && count <= bounds.upper, `${language}: ${bounds.lower} <= ${count} <= ${bounds.upper}`);
    assert.ok(bounds.learned);
  }
});

test('exactBounds: a tokenizer count with the template allowance, clamped to the proof', () => {
  const text = chat('abcd '.repeat(100));
  const proven = promptBounds(text, undefined);
  assert.deepEqual(exactBounds(100 + TEMPLATE, text, proven), { lower: 100, upper: 100 + TEMPLATE, exact: true, learned: false });
  assert.deepEqual(exactBounds(99_999, text, proven), {
    lower: proven.upper - TEMPLATE,
    upper: proven.upper,
    exact: true,
    learned: false,
  });
  const completion = promptText('/v1/completions', { prompt: 'abcd '.repeat(100) });
  const exact = exactBounds(100, completion, promptBounds(completion, undefined));
  assert.deepEqual([exact.lower, exact.upper], [100, 100], 'no template: one number');
});

test('refusalFigure: the count when the bounds meet, else the lower bound as "at least"', () => {
  assert.deepEqual(refusalFigure({ lower: 500, upper: 500 }), { tokens: 500, atLeast: false });
  assert.deepEqual(refusalFigure({ lower: 300, upper: 900 }), { tokens: 300, atLeast: true });
});

const SAMPLES: readonly { name: string; answer: Parameters<typeof ratioSample>[1]; want: ReturnType<typeof ratioSample> }[] = [
  {
    name: 'a count teaches the text tokens',
    answer: { promptTokens: 150, uncountedParts: false, truncates: false, ctx: 4096 },
    want: { bytes: 500, promptTokens: 150, templateTokens: TEMPLATE },
  },
  {
    name: 'no count, nothing',
    answer: { promptTokens: undefined, uncountedParts: false, truncates: false, ctx: 4096 },
    want: undefined,
  },
  {
    name: 'images the bytes do not count, nothing',
    answer: { promptTokens: 900, uncountedParts: true, truncates: false, ctx: 4096 },
    want: undefined,
  },
  {
    name: 'a truncating node whose context the prompt surely fit',
    answer: { promptTokens: 150, uncountedParts: false, truncates: true, ctx: 4096 },
    want: { bytes: 500, promptTokens: 150, templateTokens: TEMPLATE },
  },
  {
    name: 'a truncating node the prompt may have overflowed: its count may be the cut',
    answer: { promptTokens: 256, uncountedParts: false, truncates: true, ctx: 256 },
    want: undefined,
  },
  {
    name: 'a truncating node of unknown context',
    answer: { promptTokens: 150, uncountedParts: false, truncates: true, ctx: 0 },
    want: undefined,
  },
];

for (const c of SAMPLES) {
  test(`ratioSample: ${c.name}`, () => {
    assert.deepEqual(ratioSample(chat('abcd '.repeat(100)), c.answer), c.want);
  });
}

test('ratioSample: given token ids are taken off the count', () => {
  const text = promptText('/v1/completions', { prompt: ['abcd '.repeat(100), [1, 2, 3]] });
  assert.deepEqual(ratioSample(text, { promptTokens: 103, uncountedParts: false, truncates: false, ctx: 0 }), {
    bytes: 500,
    promptTokens: 100,
    templateTokens: 0,
  });
});
