// Faults before the first byte: every one must fail over to the healthy node, so clients see no
// error at all, and nothing may stay held afterwards. Each case has its own model, served by one
// healthy node and one faulty node, so cases do not share passive-health state.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertNoLeaks, FaultBed, FigureTable, runCase, simNode, summary } from '#test/faults/harness.ts';

const CASES = [
  { model: 'm-hang', kind: 'vllm', faults: { inference: 'hang' } },
  { model: 'm-reset', kind: 'vllm', faults: { inference: 'reset' } },
  { model: 'm-slow', kind: 'vllm', faults: { inference: 'slow_headers', slowHeadersMs: 4_000 } },
  { model: 'm-5xx', kind: 'vllm', faults: { inference: 'error500' } },
  { model: 'm-loading', kind: 'llamacpp', faults: { inference: 'loading' } },
  { model: 'm-garbage', kind: 'vllm', faults: { inference: 'garbage' } },
] as const;

const CONCURRENCY = 16;
const table = new FigureTable('Faults before the first byte (healthy + faulty node per model)');
let bed: FaultBed;

before(async () => {
  const fleet = CASES.flatMap((c) => [
    simNode(`good-${c.model}`, 'vllm', [c.model]),
    simNode(`bad-${c.model}`, c.kind, [c.model]),
  ]);
  bed = await FaultBed.start({ fleet: fleet.join('\n\n') });
});

after(async () => {
  table.print();
  await bed?.stop();
});

async function faultCase(name: string, index: number): Promise<void> {
  const c = CASES[index];
  assert.ok(c);
  const bad = `bad-${c.model}`;
  const { tally, leaks } = await runCase({
    bed,
    table,
    name,
    nodes: [bad, `good-${c.model}`],
    load: { requests: 160, concurrency: CONCURRENCY, seed: 100 + index, model: c.model, maxDurationMs: 20_000 },
    arrange: () => bed.setFaults(bad, c.faults),
    restore: () => bed.clearFaults(bad),
  });
  assert.equal(tally.clientErrors, 0, summary(tally));
  assert.ok((tally.byNode[`good-${c.model}`] ?? 0) > 0, summary(tally));
  assertNoLeaks(leaks, CONCURRENCY);
}

test('an upstream that hangs before its headers is abandoned at headers_timeout and the request fails over', () =>
  faultCase('upstream hang before headers', 0));

test('an upstream that resets the connection before its headers fails over without a client error', () =>
  faultCase('reset before headers', 1));

test('an upstream whose headers come later than headers_timeout fails over without a client error', () =>
  faultCase('slow headers past timeout', 2));

test('an upstream 5xx is hidden from the client and the request fails over', () => faultCase('5xx', 3));

test('llama.cpp\'s 503 "Loading model" fails over to a node that has the model loaded', () =>
  faultCase('llama.cpp 503 "Loading model"', 4));

test('a 200 whose body is not JSON is not passed on: the request fails over', () => faultCase('garbage JSON', 5));
