import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seededRandom } from '#src/sim/seeded-random.ts';
import { generatedText } from '#src/sim/synthetic-output.ts';
import {
  chatPromptTokens,
  countTokens,
  responsesPromptTokens,
  textPromptTokens,
  tokenIds,
  tokenize,
} from '#src/sim/tokenizer.ts';

test('counts one token per started group of four letters and one per digit or symbol', () => {
  const cases: [string, number][] = [
    ['', 0],
    ['   \n\t', 0],
    ['abcd', 1],
    ['abcde', 2],
    ['Hello world', 4],
    ['12345', 5],
    ['a,b', 3],
    ['  hi  ', 1],
    ['héllo', 2],
    ['nai\u0308ve', 2],
    ['👍👍', 2],
    ['x '.repeat(100), 100],
    ['Hello world, this is a test.', 10],
  ];
  for (const [text, expected] of cases) assert.equal(countTokens(text), expected, JSON.stringify(text));
});

test('splits text into pieces that join back to the text, whitespace glued to the next piece', () => {
  assert.deepEqual(tokenize('Hello world, ok'), ['Hell', 'o', ' worl', 'd', ',', ' ok']);
  assert.deepEqual(tokenize('a  '), ['a  ']);
  for (const text of ['  lead and trail  ', 'mixed 123 $%^ text\nnew line', 'ünïcödé 👍 ok']) {
    assert.equal(tokenize(text).join(''), text);
  }
});

test('never counts more tokens than non-whitespace code points', () => {
  const random = seededRandom(42);
  const alphabet = 'abcXYZ 0129,.;!?\n\té👍';
  const chars = Array.from(alphabet);
  for (let round = 0; round < 200; round++) {
    let text = '';
    const length = Math.floor(random() * 60);
    for (let i = 0; i < length; i++) text += chars[Math.floor(random() * chars.length)] ?? '';
    const bound = Array.from(text).filter((c) => !/\s/u.test(c)).length;
    assert.ok(countTokens(text) <= bound, JSON.stringify(text));
  }
});

test('gives the same ids for the same text and one id per token', () => {
  assert.deepEqual(tokenIds('Hello world'), tokenIds('Hello world'));
  assert.equal(tokenIds('Hello world').length, countTokens('Hello world'));
  for (const id of tokenIds('some words 123 !')) assert.ok(id >= 100 && id < 32_000);
});

test('generated text re-tokenizes to exactly the number of generated tokens', () => {
  for (const n of [0, 1, 5, 16, 40]) assert.equal(countTokens(generatedText(n)), n);
});

test('chat prompts cost 3 plus 4 per message plus the tokens of content, names and tool calls', () => {
  const cases: [unknown, number][] = [
    [undefined, 0],
    ['not an array', 0],
    [[], 3],
    [[{ role: 'user', content: 'hi' }], 8],
    [
      [
        { role: 'system', content: 'abcd efgh' },
        { role: 'user', content: '12' },
      ],
      3 + 4 + 2 + 4 + 2,
    ],
    [
      [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'abcd' },
            { type: 'image_url', image_url: { url: 'x' } },
          ],
        },
      ],
      8,
    ],
    [[{ role: 'user', name: 'bob', content: null }], 8],
    [[{ role: 'assistant', content: null, tool_calls: [{ function: { name: 'f', arguments: '{}' } }] }], 3 + 4 + 1 + 2],
    [['bare string message'], 7],
  ];
  for (const [messages, expected] of cases) assert.equal(chatPromptTokens(messages), expected, JSON.stringify(messages));
});

test('completion prompts count strings by the rules and token-id arrays one per id', () => {
  assert.equal(textPromptTokens('Hello world'), 4);
  assert.equal(textPromptTokens(['ab', 'cd']), 2);
  assert.equal(textPromptTokens([1, 2, 3]), 3);
  assert.equal(textPromptTokens([[1, 2], 'ab']), 3);
  assert.equal(textPromptTokens(undefined), 0);
});

test('responses prompts treat instructions as a system message and a string input as a user message', () => {
  assert.equal(responsesPromptTokens('hi', undefined), chatPromptTokens([{ role: 'user', content: 'hi' }]));
  assert.equal(
    responsesPromptTokens([{ role: 'user', content: [{ type: 'input_text', text: 'abcd' }] }], 'be nice'),
    chatPromptTokens([
      { role: 'system', content: 'be nice' },
      { role: 'user', content: 'abcd' },
    ]),
  );
});
