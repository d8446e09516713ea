import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '#src/core/clock.ts';
import type { GenerationPlan } from '#src/sim/context-rules.ts';
import { ModelEngine, type EngineSettings, type GenerationObserver, type GenerationOutcome } from '#src/sim/model-engine.ts';

interface Log {
  readonly events: string[];
  readonly observer: GenerationObserver;
  outcome: GenerationOutcome | undefined;
}

function logFor(name: string, clock: ManualClock, start: number): Log {
  const log: Log = {
    events: [],
    outcome: undefined,
    observer: {
      token: (piece, index) => log.events.push(`${name} token ${index}${piece} @${clock.now() - start}`),
      finished: (outcome) => {
        log.outcome = outcome;
        log.events.push(`${name} finished ${outcome.finishReason} @${clock.now() - start}`);
      },
      failed: () => log.events.push(`${name} failed @${clock.now() - start}`),
    },
  };
  return log;
}

function setup(overrides: Partial<EngineSettings> = {}): { clock: ManualClock; engine: ModelEngine; start: number } {
  const clock = new ManualClock();
  const settings: EngineSettings = {
    slots: 1,
    contextTokens: 100,
    kv: 'unified',
    ttftMs: 10,
    tokensPerSecond: 100,
    ...overrides,
  };
  return { clock, engine: new ModelEngine(settings, clock), start: clock.now() };
}

const plan = (promptTokens: number, maxNewTokens: number, finishReason: 'stop' | 'length' = 'length'): GenerationPlan => ({
  promptTokens,
  maxNewTokens,
  finishReason,
});

test('emits the first token after ttft and the rest at tokens_per_second, then finishes', () => {
  const { clock, engine, start } = setup();
  const a = logFor('a', clock, start);
  engine.submit(plan(10, 3, 'stop'), a.observer);
  clock.advance(100);
  assert.deepEqual(a.events, ['a token 0 The @10', 'a token 1 sim @20', 'a token 2 node @30', 'a finished stop @30']);
  assert.equal(a.outcome?.text, ' The sim node');
  assert.equal(a.outcome?.promptMs, 10);
  assert.equal(a.outcome?.predictedMs, 20);
  assert.equal(clock.pendingTimers(), 0);
});

test('queues requests beyond the slots and starts them in arrival order', () => {
  const { clock, engine, start } = setup({ ttftMs: 5, tokensPerSecond: 1000 });
  const logs = ['a', 'b', 'c'].map((name) => logFor(name, clock, start));
  for (const log of logs) engine.submit(plan(1, 1), log.observer);
  assert.equal(engine.processingCount(), 1);
  assert.equal(engine.waitingCount(), 2);
  clock.advance(100);
  assert.deepEqual(
    logs.map((l) => l.events.at(-1)),
    ['a finished length @5', 'b finished length @10', 'c finished length @15'],
  );
});

test('fails every processing request when the unified pool runs out, then serves the queue', () => {
  const { clock, engine, start } = setup({ slots: 2, contextTokens: 50 });
  const [a, b, c] = ['a', 'b', 'c'].map((name) => logFor(name, clock, start));
  if (a === undefined || b === undefined || c === undefined) throw new Error('logs');
  engine.submit(plan(20, 20), a.observer);
  engine.submit(plan(20, 20), b.observer);
  engine.submit(plan(5, 2), c.observer);
  clock.advance(1000);
  assert.equal(a.events.at(-1)?.startsWith('a failed'), true);
  assert.equal(b.events.at(-1)?.startsWith('b failed'), true);
  assert.equal(a.events.length + b.events.length, 11 + 2, 'the 11th generated token overflowed 40 prompt + 10 tokens');
  assert.equal(c.events.at(-1)?.startsWith('c finished'), true);
  assert.equal(engine.counters().failedTotal, 2);
});

test('per-slot budgets let the same requests finish', () => {
  const { clock, engine, start } = setup({ slots: 2, contextTokens: 50, kv: 'per-slot' });
  const [a, b] = ['a', 'b'].map((name) => logFor(name, clock, start));
  engine.submit(plan(20, 20), a?.observer ?? logFor('x', clock, start).observer);
  engine.submit(plan(20, 20), b?.observer ?? logFor('y', clock, start).observer);
  clock.advance(1000);
  assert.equal(a?.outcome?.completionTokens, 20);
  assert.equal(b?.outcome?.completionTokens, 20);
});

test('cancelling a running request frees its slot for the next one', () => {
  const { clock, engine, start } = setup();
  const a = logFor('a', clock, start);
  const b = logFor('b', clock, start);
  const cancelA = engine.submit(plan(1, 50), a.observer);
  engine.submit(plan(1, 1), b.observer);
  clock.advance(15);
  cancelA();
  cancelA();
  clock.advance(100);
  assert.deepEqual(a.events, ['a token 0 The @10']);
  assert.deepEqual(b.events, ['b token 0 The @25', 'b finished length @25']);
});

test('reports slots, counters and KV use while generating', () => {
  const { clock, engine } = setup({ slots: 2 });
  engine.submit(plan(10, 5), logFor('a', clock, 0).observer);
  clock.advance(20);
  const [first, second] = engine.slotViews();
  assert.equal(first?.isProcessing, true);
  assert.equal(first?.lastPromptTokens, 10);
  assert.equal(first?.generatedTokens, 2);
  assert.equal(second?.isProcessing, false);
  assert.equal(engine.kvTokensInUse(), 12);
  clock.advance(100);
  assert.equal(engine.counters().generatedTokensTotal, 5);
  assert.equal(engine.counters().finishedLength, 1);
  assert.equal(engine.slotViews()[0]?.generatedTokens, 5);
});

test('close drops every request and timer without calling back', () => {
  const { clock, engine, start } = setup();
  const a = logFor('a', clock, start);
  engine.submit(plan(1, 5), a.observer);
  engine.submit(plan(1, 5), a.observer);
  engine.close();
  clock.advance(1000);
  assert.deepEqual(a.events, []);
  assert.equal(engine.processingCount(), 0);
});
