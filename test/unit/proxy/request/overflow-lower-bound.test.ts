// After a node's "prompt too long" refusal (issue 21 item 1): a plausible count collapses the
// prompt's bounds for the remaining attempts; without a count the refusal still proves the prompt
// did not fit that node's context; a contradicted refusal changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judgeOverflowRefusal, type OverflowFacts } from '#src/proxy/request/overflow-refusal.ts';
import { tokenizerIsMoot } from '#src/proxy/request/prompt-size.ts';

const base: OverflowFacts = {
  estimate: 20_000,
  lowerBound: 100,
  upperBound: 20_000,
  uncountedParts: false,
  maxTokens: 8,
  advertisedCtx: 4096,
  reportedCtx: undefined,
  reportedPromptTokens: undefined,
};

const ROWS: readonly { name: string; facts: Partial<OverflowFacts>; upper: number | undefined; lower: number | undefined }[] = [
  { name: 'a count collapses both bounds', facts: { reportedPromptTokens: 5000 }, upper: 5000, lower: 5000 },
  { name: 'a count below the lower bound keeps the lower bound', facts: { reportedPromptTokens: 50 }, upper: 50, lower: 50 },
  { name: 'no count: more than the context less the answer', facts: {}, upper: 20_000, lower: 4096 - 8 },
  {
    name: 'no count, the context the node stated',
    facts: { reportedCtx: 4096, advertisedCtx: 0 },
    upper: 20_000,
    lower: 4096 - 8,
  },
  { name: 'no count, no context: unchanged', facts: { advertisedCtx: 0 }, upper: 20_000, lower: 100 },
  {
    name: 'a contradicted refusal does not raise it',
    facts: { reportedPromptTokens: 99_999_999, upperBound: 3000, estimate: 3000 },
    upper: 3000,
    lower: 100,
  },
  {
    name: 'an exact estimate stays exact',
    facts: { lowerBound: undefined, estimate: 5000, upperBound: 5000, advertisedCtx: 0, reportedCtx: 4096 },
    upper: 5000,
    lower: 5000,
  },
];

for (const row of ROWS) {
  test(row.name, () => {
    const judged = judgeOverflowRefusal({ ...base, ...row.facts });
    assert.equal(judged.promptTokens, row.upper);
    assert.equal(judged.minPromptTokens, row.lower);
    if (judged.minPromptTokens !== undefined && judged.promptTokens !== undefined)
      assert.ok(judged.minPromptTokens <= judged.promptTokens);
  });
}

test('tokenizerIsMoot: only a proven lower bound past every context spares the tokenizer', () => {
  const bounds = { lower: 5000, upper: 20_000, exact: false, learned: false };
  assert.equal(tokenizerIsMoot(bounds, 8, 4096), true);
  assert.equal(tokenizerIsMoot({ ...bounds, lower: 100 }, 8, 4096), false, 'typically far too large is no proof: ask');
  assert.equal(tokenizerIsMoot(bounds, 8, 0), false, 'no known context');
});
