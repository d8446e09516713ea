import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admits, rememberContexts } from '#src/capacity/index.ts';

test('known contexts keep the last figure per model and change only when a figure does', () => {
  const first = rememberContexts({}, { a: { nCtx: 1, slots: 1 } });
  assert.equal(rememberContexts(first, { a: { nCtx: 1, slots: 1 } }), first);
  assert.deepEqual(rememberContexts(first, { b: { nCtx: 2, slots: undefined } }), {
    a: { nCtx: 1, slots: 1 },
    b: { nCtx: 2, slots: undefined },
  });
});

test('a slot and budget check admits one idle request and refuses past slots or budget', () => {
  const cases: [Parameters<typeof admits>, string | undefined][] = [
    [[{ requests: 0, tokens: 0 }, { slots: 1, budget: 100 }, 500], undefined],
    [[{ requests: 1, tokens: 10 }, { slots: 1, budget: undefined }, 5], 'no_slot'],
    [[{ requests: 1, tokens: 60 }, { slots: 4, budget: 100 }, 50], 'no_budget'],
    [[{ requests: 1, tokens: 50 }, { slots: 4, budget: 100 }, 50], undefined],
    [[{ requests: 9, tokens: 9_000 }, { slots: undefined, budget: undefined }, 50], undefined],
  ];
  for (const [args, expected] of cases) assert.equal(admits(...args), expected, JSON.stringify(args));
});
