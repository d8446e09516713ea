import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DEFAULT_GENERATED_TOKENS,
  decideLlamaCpp,
  decideOllama,
  decideSglang,
  decideVllm,
  requestedMaxTokens,
  type ContextVerdict,
} from '#src/sim/context-rules.ts';

function plan(verdict: ContextVerdict): [number, string] | string {
  return verdict.ok ? [verdict.plan.maxNewTokens, verdict.plan.finishReason] : verdict.error.rule;
}

test('llama.cpp rejects prompts of n_ctx tokens or more and stops generation at n_ctx', () => {
  const cases: [number, number | undefined, [number, string] | string][] = [
    [100, undefined, 'llamacpp_prompt_too_long'],
    [101, 5, 'llamacpp_prompt_too_long'],
    [99, 5, [1, 'length']],
    [50, undefined, [DEFAULT_GENERATED_TOKENS, 'stop']],
    [90, undefined, [10, 'length']],
    [50, 20, [20, 'length']],
    [10, 0, [0, 'length']],
  ];
  for (const [prompt, max, expected] of cases)
    assert.deepEqual(plan(decideLlamaCpp(prompt, max, 100)), expected, `${prompt}/${max}`);
});

test('vLLM needs prompt plus max_tokens to fit, and room for one token without max_tokens', () => {
  const cases: [number, number | undefined, [number, string] | string][] = [
    [90, 10, [10, 'length']],
    [90, 11, 'vllm_too_long'],
    [100, undefined, 'vllm_too_long'],
    [99, undefined, [1, 'length']],
    [10, undefined, [DEFAULT_GENERATED_TOKENS, 'stop']],
  ];
  for (const [prompt, max, expected] of cases) assert.deepEqual(plan(decideVllm(prompt, max, 100)), expected, `${prompt}/${max}`);
});

test('SGLang rejects an input reaching the context, then a total reaching it', () => {
  const cases: [number, number | undefined, [number, string] | string][] = [
    [100, undefined, 'sglang_input_too_long'],
    [90, 10, 'sglang_total_too_long'],
    [90, 9, [9, 'length']],
    [95, undefined, [5, 'length']],
  ];
  for (const [prompt, max, expected] of cases)
    assert.deepEqual(plan(decideSglang(prompt, max, 100)), expected, `${prompt}/${max}`);
});

test('Ollama truncates the prompt to num_ctx and generates what was asked', () => {
  const verdict = decideOllama(500, 300, 100);
  assert.equal(verdict.ok, true);
  if (verdict.ok) assert.deepEqual(verdict.plan, { promptTokens: 100, maxNewTokens: 300, finishReason: 'length' });
});

test('reads the first non-negative integer limit among the given fields', () => {
  assert.equal(requestedMaxTokens({ max_tokens: 5 }, ['max_completion_tokens', 'max_tokens']), 5);
  assert.equal(requestedMaxTokens({ max_completion_tokens: 3, max_tokens: 5 }, ['max_completion_tokens', 'max_tokens']), 3);
  assert.equal(requestedMaxTokens({ max_tokens: -1 }, ['max_tokens']), undefined);
  assert.equal(requestedMaxTokens({ max_tokens: 2.5 }, ['max_tokens']), undefined);
  assert.equal(requestedMaxTokens({ max_tokens: '5' }, ['max_tokens']), undefined);
});

test('a natural answer ends with "stop" when it fits the limit, and is cut with "length" when it does not', () => {
  const cases: [number, number | undefined, number, [number, string] | string][] = [
    // prompt, max_tokens, natural answer tokens → plan
    [50, undefined, 12, [12, 'stop']],
    [50, 32_000, 12, [12, 'stop']],
    [50, 12, 12, [12, 'stop']],
    [50, 5, 12, [5, 'length']],
    [95, undefined, 12, [5, 'length']],
    [100, undefined, 12, 'llamacpp_prompt_too_long'],
  ];
  for (const [prompt, max, natural, expected] of cases)
    assert.deepEqual(plan(decideLlamaCpp(prompt, max, 100, natural)), expected, `${prompt}/${max}/${natural}`);
  assert.deepEqual(plan(decideVllm(50, undefined, 100, 30)), [30, 'stop']);
  assert.deepEqual(plan(decideSglang(50, 40, 100, 30)), [30, 'stop']);
  assert.deepEqual(plan(decideOllama(5000, 3, 100, 30)), [3, 'length']);
});
