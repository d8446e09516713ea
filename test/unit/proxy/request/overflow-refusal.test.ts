// judgeOverflowRefusal, table-driven: a node's "prompt too long" figures judge that node only, may
// lower the routed prompt size but never raise it past the gateway's upper bound, and a refusal the
// gateway's own figures disprove is a contradiction (counted against the node, not believed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONTRADICTION_SLACK_TOKENS, judgeOverflowRefusal, type OverflowFacts } from '#src/proxy/request/overflow-refusal.ts';
import { upstreamVerdict } from '#src/proxy/failover/attempt-feedback.ts';

const base: OverflowFacts = {
  estimate: 3_000,
  upperBound: 3_000,
  uncountedParts: false,
  maxTokens: 100,
  advertisedCtx: 0,
  reportedCtx: 2_048,
  reportedPromptTokens: 2_900,
};
const SLACK = CONTRADICTION_SLACK_TOKENS;

const rows: {
  name: string;
  facts: Partial<OverflowFacts>;
  promptTokens: number | undefined;
  learnCtx: number | undefined;
  contradiction: RegExp | undefined;
}[] = [
  {
    name: 'a plausible refusal: its exact count lowers the estimate, its context is learned',
    facts: {},
    promptTokens: 2_900,
    learnCtx: 2_048,
    contradiction: undefined,
  },
  {
    name: 'a count above the estimate does not raise it',
    facts: { estimate: 2_500 },
    promptTokens: 2_500,
    learnCtx: 2_048,
    contradiction: undefined,
  },
  {
    name: 'no count: the estimate stays',
    facts: { reportedPromptTokens: undefined },
    promptTokens: 3_000,
    learnCtx: 2_048,
    contradiction: undefined,
  },
  {
    name: 'no estimate yet: the count, clamped to the upper bound',
    facts: { estimate: undefined, reportedPromptTokens: 99_999_999 },
    promptTokens: 3_000,
    learnCtx: 2_048,
    contradiction: /counted 99999999 prompt tokens/,
  },
  {
    name: 'a count past the upper bound is clamped and a contradiction',
    facts: { reportedPromptTokens: 99_999_999 },
    promptTokens: 3_000,
    learnCtx: 2_048,
    contradiction: /counted 99999999 prompt tokens for a prompt of at most 3000 tokens \+ 100 max_tokens/,
  },
  {
    name: 'a count just past the bound (special tokens) is not a lie',
    facts: { reportedPromptTokens: 3_000 + SLACK },
    promptTokens: 3_000,
    learnCtx: 2_048,
    contradiction: undefined,
  },
  {
    name: 'a negative count clamps to 0',
    facts: { reportedPromptTokens: -5 },
    promptTokens: 0,
    learnCtx: 2_048,
    contradiction: undefined,
  },
  {
    name: 'advertising room for the whole request, then refusing',
    facts: { advertisedCtx: 8_192, reportedCtx: undefined },
    promptTokens: 2_900,
    learnCtx: undefined,
    contradiction: /advertises a context of 8192 tokens yet refused/,
  },
  {
    name: 'advertising just too little is plausible',
    facts: { advertisedCtx: 3_000 + SLACK + 99, reportedCtx: undefined },
    promptTokens: 2_900,
    learnCtx: undefined,
    contradiction: undefined,
  },
  {
    name: 'a stated context that holds the request is not learned',
    facts: { reportedCtx: 131_072 },
    promptTokens: 2_900,
    learnCtx: undefined,
    contradiction: /stated a context of 131072 tokens yet refused/,
  },
  {
    name: 'a stated context that differs from the advertised one',
    facts: { advertisedCtx: 2_500, reportedCtx: 2_048 },
    promptTokens: 2_900,
    learnCtx: 2_048,
    contradiction: /stated a context of 2048 tokens but advertises 2500/,
  },
  {
    name: 'images may make any count true: no contradiction from sizes',
    facts: { uncountedParts: true, reportedPromptTokens: 99_999_999, advertisedCtx: 8_192, reportedCtx: 8_192 },
    promptTokens: 3_000,
    learnCtx: 8_192,
    contradiction: undefined,
  },
  {
    name: 'without max_tokens one token of answer is assumed',
    facts: { maxTokens: undefined, advertisedCtx: 3_000 + SLACK + 1, reportedCtx: undefined },
    promptTokens: 2_900,
    learnCtx: undefined,
    contradiction: /advertises a context of 3017 tokens yet refused a prompt of at most 3000 tokens$/,
  },
];

for (const row of rows) {
  test(`judgeOverflowRefusal: ${row.name}`, () => {
    const judged = judgeOverflowRefusal({ ...base, ...row.facts });
    assert.equal(judged.promptTokens, row.promptTokens);
    assert.equal(judged.learnCtx, row.learnCtx);
    if (row.contradiction === undefined) assert.equal(judged.contradiction, undefined);
    else assert.match(String(judged.contradiction), row.contradiction);
  });
}

test('a contradictory refusal counts toward passive ejection; a plausible one proves the node alive', () => {
  assert.equal(upstreamVerdict('contradictory_refusal'), 'failure');
  assert.equal(upstreamVerdict('context_overflow'), 'success');
});
