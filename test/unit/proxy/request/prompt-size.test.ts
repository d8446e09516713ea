// A request's prompt size (src/proxy/request/prompt-size.ts), part by part: the estimator (never
// below what a tokenizer counts), the proven and learned bounds (issue 21 item 1), the sample an
// answer teaches, the figure a refusal quotes — the proven bounds hold the simulated tokenizer's
// count for English, code and CJK alike — and sizePrompt, which asks a node's tokenizer only when
// the bounds cannot decide.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MockAgent } from 'undici';
import { MAX_BYTES_PER_TOKEN, TOKEN_RATIO_MIN_SAMPLES, type TokenRatio } from '#src/capacity/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import {
  chatBytesBounds,
  exactBounds,
  hasUncountedParts,
  LEARNED_SAFETY,
  promptBounds,
  promptText,
  ratioSample,
  refusalFigure,
  requestedChoices,
  requestedMaxTokens,
  sizePrompt,
  upperBoundTokens,
  wantsExactCount,
  type SizingDeps,
} from '#src/proxy/request/prompt-size.ts';
import { chatPromptTokens, textPromptTokens } from '#src/sim/index.ts';
import { seededRandom as seeded } from '#src/sim/seeded-random.ts';
import { model, node, NOW, snapshotOf } from '#test/fixtures/builders.ts';
import { chatOfLanguage, LANGUAGES } from '#test/fixtures/prompt-languages.ts';

// ---- the estimator

const ALPHABET = ['a', 'Z', 'é', '字', '7', ' ', '\n', '.', '🙂', 'ß', '-', 'x', 'y'];

function randomText(random: () => number, length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) text += ALPHABET[Math.floor(random() * ALPHABET.length)];
  return text;
}

test('the estimate is never below what the simulated tokenizer counts, for any text', () => {
  const random = seeded(42);
  for (let i = 0; i < 300; i++) {
    const messages = Array.from({ length: 1 + Math.floor(random() * 4) }, () => ({
      role: 'user',
      content: randomText(random, Math.floor(random() * 400)),
    }));
    const chat = { model: 'm', messages };
    assert.ok(upperBoundTokens(promptText('/v1/chat/completions', chat)) >= chatPromptTokens(messages), JSON.stringify(messages));
    const prompt = randomText(random, Math.floor(random() * 400));
    assert.ok(upperBoundTokens(promptText('/v1/completions', { prompt })) >= textPromptTokens(prompt));
  }
});

test('every part of a chat that a template renders is counted: parts, names, tool calls, tools', () => {
  const text = promptText('/v1/chat/completions', {
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'abc' },
          { type: 'image_url', image_url: { url: 'x' } },
        ],
        name: 'bob',
      },
      { role: 'assistant', content: null, tool_calls: [{ function: { name: 'f', arguments: '{"a":1}' } }] },
    ],
    tools: [{ type: 'function' }],
  });
  assert.deepEqual(text.pieces, ['abc', 'bob', 'f', '{"a":1}', '[{"type":"function"}]']);
  assert.equal(text.messages, 2);
});

test('token-id prompts count one token per id; responses input and instructions count as messages', () => {
  assert.equal(upperBoundTokens(promptText('/v1/completions', { prompt: [1, 2, 3] })), 3);
  const responses = promptText('/v1/responses', { instructions: 'be brief', input: 'hi' });
  assert.deepEqual([responses.pieces, responses.messages], [['be brief', 'hi'], 2]);
});

test('max_tokens, max_completion_tokens and max_output_tokens are read; junk is ignored', () => {
  assert.equal(requestedMaxTokens({ max_tokens: 10 }), 10);
  assert.equal(requestedMaxTokens({ max_completion_tokens: 20, max_tokens: 10 }), 20);
  assert.equal(requestedMaxTokens({ max_output_tokens: 5 }), 5);
  assert.equal(requestedMaxTokens({ max_tokens: -1 }), undefined);
  assert.equal(requestedMaxTokens({ max_tokens: '10' }), undefined);
});

test('an exact count is asked for only when the bound is a real share of the smallest context', () => {
  const nodes = [node('a', { models: ['m'], capacity: { role: 'single', host: { nCtx: 8192, slots: 4 } } })];
  assert.equal(wantsExactCount(500, undefined, nodes, 'm'), false);
  assert.equal(wantsExactCount(2000, undefined, nodes, 'm'), true);
  assert.equal(wantsExactCount(2000, undefined, [node('u', { models: ['m'] })], 'm'), false, 'unknown contexts need no count');
});

test('Ollama’s native bodies: chat messages, generate’s system and prompt, embed’s input, embeddings’ prompt; options.num_predict', () => {
  assert.deepEqual(promptText('/api/chat', { messages: [{ role: 'user', content: 'hi', images: ['AAAA'] }] }).pieces, ['hi']);
  const generate = promptText('/api/generate', { system: 'be brief', prompt: 'once' });
  assert.deepEqual([generate.pieces, generate.messages], [['be brief', 'once'], 2]);
  assert.deepEqual(promptText('/api/embed', { input: ['a', 'b'] }).pieces, ['a', 'b']);
  assert.deepEqual(promptText('/api/embeddings', { prompt: 'c' }).pieces, ['c']);
  assert.equal(requestedMaxTokens({ options: { num_predict: 64 } }), 64);
  assert.equal(requestedMaxTokens({ options: { num_predict: -1 } }), undefined, 'negative = unbounded');
  assert.equal(requestedMaxTokens({ max_tokens: 5, options: { num_predict: 64 } }), 5);
});

test('requestedChoices: n and best_of on chat and completions, the larger; one answer anywhere else', () => {
  const cases: [endpoint: string, json: Record<string, unknown>, choices: number][] = [
    ['/v1/chat/completions', {}, 1],
    ['/v1/chat/completions', { n: 100 }, 100],
    ['/v1/completions', { n: 2, best_of: 30 }, 30],
    ['/v1/completions', { n: 5, best_of: 3 }, 5],
    ['/v1/chat/completions', { n: 0 }, 1],
    ['/v1/chat/completions', { n: -3 }, 1],
    ['/v1/chat/completions', { n: 2.5 }, 1],
    ['/v1/chat/completions', { n: '100' }, 1],
    ['/v1/messages', { n: 100 }, 1],
    ['/v1/responses', { n: 100 }, 1],
    ['/api/chat', { n: 100, options: { n: 100 } }, 1],
  ];
  for (const [endpoint, json, choices] of cases)
    assert.equal(requestedChoices(endpoint, json), choices, `${endpoint} ${JSON.stringify(json)}`);
});

test('hasUncountedParts: image and audio parts, in chat messages and responses input', () => {
  const text = { role: 'user', content: [{ type: 'text', text: 'hi' }] };
  const image = { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:' } }] };
  assert.equal(hasUncountedParts({ messages: [{ role: 'user', content: 'hi' }, text] }), false);
  assert.equal(hasUncountedParts({ messages: [text, image] }), true);
  assert.equal(hasUncountedParts({ input: 'plain text' }), false);
  assert.equal(hasUncountedParts({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'x' }] }] }), true);
  assert.equal(hasUncountedParts({ prompt: [1, 2, 3] }), false);
});

// ---- the bounds

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

// ---- sizePrompt

/** A vLLM node serving `m` with a listed context of `ctx` tokens. */
function vllmNode(ctx: number): NodeView {
  const base = node('v', { kind: 'vllm', models: ['m'] });
  const listed = model('m', { contextTokens: ctx });
  return { ...base, discovery: { ...base.discovery, models: [listed] }, modelsById: new Map([['m', listed]]) };
}

function depsOf(nodes: readonly NodeView[], agent: MockAgent): SizingDeps {
  return { fleet: { views: () => nodes, snapshot: () => snapshotOf(nodes) }, pools: { get: () => agent } };
}

const ask = (content: string) => ({
  endpoint: '/v1/chat/completions',
  model: 'm',
  json: { model: 'm', messages: [{ role: 'user', content }] },
  maxTokens: 16,
  nowMs: NOW,
  tokenizeTimeoutMs: 1000,
});

test('a prompt far from every context is sized at once: bounds, not a promise (no turn of the event loop)', () => {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const sized = sizePrompt(depsOf([vllmNode(100_000)], agent), ask('hello there'), new AbortController().signal);
  assert.ok(!(sized instanceof Promise));
  assert.equal(sized.exact, false);
  assert.ok(sized.upper >= sized.lower && sized.upper > 0);
});

test("a prompt whose bounds straddle the context is counted by the node's tokenizer: a promise of the exact bounds", async () => {
  const agent = new MockAgent();
  agent.disableNetConnect();
  agent.get('http://127.0.0.1:1').intercept({ path: '/v/tokenize', method: 'POST' }).reply(200, { count: 300 });
  const sized = sizePrompt(depsOf([vllmNode(1000)], agent), ask('word '.repeat(400)), new AbortController().signal);
  assert.ok(sized instanceof Promise);
  const bounds = await sized;
  assert.equal(bounds.exact, true);
  // The node's count, with the chat template's tokens it adds around the messages.
  assert.ok(bounds.upper >= 300 && bounds.upper < 400 && bounds.lower <= bounds.upper);
  await agent.close();
});
