import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimatedWork, type AnswerUsage, type WorkAsk } from '#src/proxy/attempt/answer-usage.ts';
import { knownRate, speedLesson } from '#src/proxy/failover/attempt-feedback.ts';

const RATE = { tokensPerSecond: 50, firstTokenMs: 400 };

test('estimatedWork: the prompt, and the generation until the cancel at the learned rate, capped, table', () => {
  const work = (over: Partial<WorkAsk>): WorkAsk => ({ promptTokens: 30, completionCap: 200, choices: 1, rate: RATE, ...over });
  const rows: [string, WorkAsk, number | undefined, AnswerUsage | undefined][] = [
    ['not sized: nothing to charge', work({ promptTokens: undefined }), 5_000, undefined],
    [
      'no rate known: the prompt alone, marked so',
      work({ rate: undefined }),
      5_000,
      { promptTokens: 30, completionTokens: 0, counted: 'estimated', basis: 'prompt' },
    ],
    [
      'a rate of 0 is none',
      work({ rate: { tokensPerSecond: 0, firstTokenMs: 0 } }),
      5_000,
      { promptTokens: 30, completionTokens: 0, counted: 'estimated', basis: 'prompt' },
    ],
    ['elapsed unknown', work({}), undefined, { promptTokens: 30, completionTokens: 0, counted: 'estimated', basis: 'prompt' }],
    [
      'left before the first token could come',
      work({}),
      300,
      { promptTokens: 30, completionTokens: 0, counted: 'estimated', basis: 'decode_rate' },
    ],
    [
      '2 s at the node: 1.6 s of generation at 50/s',
      work({}),
      2_000,
      { promptTokens: 30, completionTokens: 80, counted: 'estimated', basis: 'decode_rate' },
    ],
    [
      'no first-token time learned: all of it',
      work({ rate: { tokensPerSecond: 50, firstTokenMs: undefined } }),
      2_000,
      { promptTokens: 30, completionTokens: 100, counted: 'estimated', basis: 'decode_rate' },
    ],
    [
      'capped at what the request allowed',
      work({}),
      60_000,
      { promptTokens: 30, completionTokens: 200, counted: 'estimated', basis: 'decode_rate' },
    ],
    [
      'each answer asked is generated',
      work({ choices: 3, completionCap: 600 }),
      2_000,
      { promptTokens: 30, completionTokens: 240, counted: 'estimated', basis: 'decode_rate' },
    ],
    [
      'each answer capped together',
      work({ choices: 3, completionCap: 150 }),
      2_000,
      { promptTokens: 30, completionTokens: 150, counted: 'estimated', basis: 'decode_rate' },
    ],
    ['whole tokens only', work({}), 421, { promptTokens: 30, completionTokens: 1, counted: 'estimated', basis: 'decode_rate' }],
  ];
  for (const [name, given, elapsed, want] of rows) assert.deepEqual(estimatedWork(given, elapsed), want, name);
});

test("knownRate: the node's learned rate for the model, only when usable", () => {
  const T0 = 1_700_000_000_000;
  const node = {
    decodeRates: {
      m: { tokens: 100, decodeMs: 2_000, firstTokenMs: 300, samples: 3, atMs: T0 },
      young: { tokens: 100, decodeMs: 2_000, firstTokenMs: 300, samples: 1, atMs: T0 },
    },
  };
  assert.deepEqual(knownRate(node, 'm', T0), { tokensPerSecond: 50, firstTokenMs: 300 });
  assert.equal(knownRate(node, 'young', T0), undefined, 'too few answers');
  assert.equal(knownRate(node, 'other', T0), undefined);
  assert.equal(knownRate({}, 'm', T0), undefined);
});

test('speedLesson: a 200 delivered, one answer asked', () => {
  const decode = { tokens: 20, decodeMs: 400, firstTokenMs: 100 };
  assert.deepEqual(speedLesson({ kind: 'delivered', status: 200, firstByteMs: 1, decode }, 1), decode);
  assert.equal(
    speedLesson({ kind: 'delivered', status: 200, firstByteMs: 1, decode }, 2),
    undefined,
    'several answers side by side',
  );
  assert.equal(speedLesson({ kind: 'delivered', status: 400, firstByteMs: 1, decode }, 1), undefined);
  assert.equal(speedLesson({ kind: 'client_gone', status: 200 }, 1), undefined);
});
