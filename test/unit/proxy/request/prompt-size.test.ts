import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  hasUncountedParts,
  promptText,
  requestedChoices,
  requestedMaxTokens,
  upperBoundTokens,
  wantsExactCount,
} from '#src/proxy/request/prompt-size.ts';
import { chatPromptTokens, textPromptTokens } from '#src/sim/index.ts';
import { node } from '#test/fixtures/builders.ts';
import { seededRandom as seeded } from '#src/sim/seeded-random.ts';

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
