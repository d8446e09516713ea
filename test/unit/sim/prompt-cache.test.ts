// The llama.cpp sims' prompt cache: a prompt sharing a prefix with the last one on its slot has its
// first token sooner (down to `prefix_cache_ttft` when all of it was cached), a new request goes to
// the free slot whose cached prompt it shares most with, and without the setting nothing changes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '#src/core/clock.ts';
import type { GenerationPlan } from '#src/sim/context-rules.ts';
import { ModelEngine, type EngineSettings, type GenerationOutcome } from '#src/sim/model-engine.ts';
import { cachedPromptTokens, commonPrefixLength, mostSimilarSlot, promptTtftMs } from '#src/sim/prompt-cache.ts';
import { enqueueJob, emptySlotTable } from '#src/sim/slot-table.ts';
import { startSimNode } from '#src/sim/index.ts';

test('the shared prefix, in characters and in prompt tokens', () => {
  assert.equal(commonPrefixLength('abcdef', 'abcxyz'), 3);
  assert.equal(commonPrefixLength('', 'abc'), 0);
  const cases: [string | undefined, string | undefined, number, number][] = [
    [undefined, 'abcd', 100, 0],
    ['abcd', 'abcd', 100, 100],
    ['ab', 'abcd', 100, 50],
    ['abzz', 'abcd', 10, 5],
    ['xyz', 'abcd', 100, 0],
    ['abcd', '', 100, 0],
  ];
  for (const [cached, prompt, tokens, expected] of cases) assert.equal(cachedPromptTokens(cached, prompt, tokens), expected);
});

test('the first-token time falls linearly with the cached share', () => {
  const cases: [number, number, number, number, number][] = [
    // ttft, hit ttft, cached, prompt → ms
    [1000, 100, 0, 500, 1000],
    [1000, 100, 500, 500, 100],
    [1000, 100, 250, 500, 550],
    [1000, 100, 900, 500, 100],
    [1000, 100, 5, 0, 1000],
  ];
  for (const [ttft, hit, cached, prompt, expected] of cases) assert.equal(promptTtftMs(ttft, hit, cached, prompt), expected);
});

test('a request takes the free slot with the most similar cached prompt; on ties the least recently used', () => {
  const cached = [
    { promptText: 'hello world', taskId: 1 },
    { promptText: 'abc', taskId: 2 },
    { promptText: undefined, taskId: undefined },
  ];
  assert.equal(
    mostSimilarSlot([0, 1, 2], (s) => cached[s], 'abcdef'),
    1,
  );
  assert.equal(
    mostSimilarSlot([0, 2], (s) => cached[s], 'zzz'),
    2,
  );
  assert.equal(
    mostSimilarSlot([0, 1], (s) => cached[s], 'zzz'),
    0,
  );
  const table = emptySlotTable(3);
  assert.deepEqual(enqueueJob(table, 7).started, [{ jobId: 7, slot: 0 }]);
  assert.deepEqual(enqueueJob(table, 7, () => 2).started, [{ jobId: 7, slot: 2 }]);
  assert.deepEqual(enqueueJob(table, 7, () => 9).started, [{ jobId: 7, slot: 0 }], 'a pick that is not free is ignored');
});

function run(
  settings: Partial<EngineSettings>,
  plans: GenerationPlan[],
): { firstTokenAt: number[]; outcomes: GenerationOutcome[] } {
  const clock = new ManualClock();
  const engine = new ModelEngine(
    { slots: 2, contextTokens: 10_000, kv: 'per-slot', ttftMs: 1000, tokensPerSecond: 1000, ...settings },
    clock,
  );
  const firstTokenAt: number[] = [];
  const outcomes: GenerationOutcome[] = [];
  for (const plan of plans) {
    const start = clock.now();
    engine.submit(plan, {
      token: (_piece, index) => {
        if (index === 0) firstTokenAt.push(clock.now() - start);
      },
      finished: (outcome) => outcomes.push(outcome),
      failed: () => assert.fail('failed'),
    });
    clock.advance(5000);
  }
  return { firstTokenAt, outcomes };
}

const turn = (text: string): GenerationPlan => ({ promptTokens: 400, maxNewTokens: 2, finishReason: 'stop', promptText: text });

test('an agent session: each turn extends the last, so its first token comes sooner; another prompt is cold', () => {
  const first = 'S'.repeat(1000);
  const second = `${first}${'T'.repeat(1000)}`;
  const plans = [turn(first), turn(second), turn('other prompt entirely')];
  const cached = run({ prefixCacheTtftMs: 100 }, plans);
  assert.deepEqual(cached.firstTokenAt, [1000, 550, 1000]);
  assert.deepEqual(
    cached.outcomes.map((o) => [o.cachedTokens, o.promptMs]),
    [
      [0, 1000],
      [200, 550],
      [0, 1000],
    ],
  );
  // The third prompt took the other slot, so the session's slot still holds its prefix.
  const back = run({ prefixCacheTtftMs: 100 }, [...plans, turn(`${second}U`)]);
  assert.ok((back.firstTokenAt[3] ?? 1000) < 200, `${back.firstTokenAt[3]}`);
  const uncached = run({}, plans);
  assert.deepEqual(uncached.firstTokenAt, [1000, 1000, 1000]);
  assert.deepEqual(
    uncached.outcomes.map((o) => o.cachedTokens),
    [0, 0, 0],
  );
});

test("a llama-server sim's second turn reports its cached prompt (timings.cache_n, cached_tokens); without the setting none", async () => {
  const ask = async (url: string, messages: unknown[]): Promise<{ cache: number; processed: number; cached: number }> => {
    const answer = (await (
      await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ messages, max_tokens: 2 }),
        signal: AbortSignal.timeout(10_000),
      })
    ).json()) as { timings: { cache_n: number; prompt_n: number }; usage: { prompt_tokens_details: { cached_tokens: number } } };
    return {
      cache: answer.timings.cache_n,
      processed: answer.timings.prompt_n,
      cached: answer.usage.prompt_tokens_details.cached_tokens,
    };
  };
  const first = [{ role: 'user', content: 'word '.repeat(200) }];
  const second = [...first, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'and then?' }];
  const cached = await startSimNode({
    kind: 'llamacpp',
    models: ['m'],
    slots: 2,
    ttftMs: 5,
    prefixCacheTtftMs: 1,
    tokensPerSecond: 5000,
  });
  const plain = await startSimNode({ kind: 'llamacpp', models: ['m'], slots: 2, ttftMs: 5, tokensPerSecond: 5000 });
  try {
    assert.deepEqual((await ask(cached.url, first)).cache, 0);
    const next = await ask(cached.url, second);
    assert.ok(next.cache > 150, JSON.stringify(next));
    assert.equal(next.cached, next.cache);
    assert.ok(next.processed < 30, JSON.stringify(next));
    await ask(plain.url, first);
    assert.deepEqual((await ask(plain.url, second)).cache, 0);
  } finally {
    await cached.close();
    await plain.close();
  }
});
