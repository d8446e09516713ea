// Faults after the first byte, and clients that leave. A stream the node breaks must end cleanly
// for the client (a short stream, never a socket error); a whole JSON answer the node breaks is
// held back, so it fails over; a client that aborts anywhere releases everything it held.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertNoLeaks, chatSpec, FaultBed, FigureTable, runCase, simNode, summary } from '#test/faults/harness.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';

const CONCURRENCY = 16;
const TOTAL_TIMEOUT_MS = 4_000;
const table = new FigureTable('Faults after the first byte, and client aborts');
let bed: FaultBed;

before(async () => {
  bed = await FaultBed.start({
    fleet: [
      simNode('good-reset', 'vllm', ['m-reset']),
      simNode('bad-reset', 'llamacpp', ['m-reset']),
      simNode('good-stall', 'vllm', ['m-stall']),
      // One token every 2 s after the first: a stream that stalls past body_idle_timeout (1.5 s).
      simNode('bad-stall', 'vllm', ['m-stall'], { tokens_per_second: 0.5 }),
      // Few slots and slower tokens: most requests wait in the gateway's queue, streams last ~100 ms.
      simNode('abort-a', 'vllm', ['m-abort'], { slots: 2, tokens_per_second: 150 }),
      simNode('abort-b', 'llamacpp', ['m-abort'], { slots: 2, tokens_per_second: 150 }),
      // A token every 250 ms, never silent for long: only total_timeout can end a long answer.
      simNode('long', 'vllm', ['m-long'], { tokens_per_second: 4 }),
    ].join('\n\n'),
    upstream: { total_timeout: `${TOTAL_TIMEOUT_MS}ms` },
  });
});

after(async () => {
  table.print();
  await bed?.stop();
});

test('a node that resets mid-stream ends the client stream cleanly, and a mid-body reset of a JSON answer fails over', async () => {
  const { tally, leaks } = await runCase({
    bed,
    table,
    name: 'mid-stream reset',
    nodes: ['good-reset', 'bad-reset'],
    load: { requests: 160, concurrency: CONCURRENCY, seed: 201, model: 'm-reset' },
    arrange: () => bed.setFaults('bad-reset', { inference: 'midstream_reset', midstreamAfterChunks: 2 }),
    restore: () => bed.clearFaults('bad-reset'),
  });
  assert.equal(tally.avoidable, 0, summary(tally));
  assert.equal(tally.byKind.stream_socket_error ?? 0, 0, `SSE must end cleanly: ${summary(tally)}`);
  assert.equal(tally.byKind.cut_body ?? 0, 0, `JSON answers are held until whole, so they fail over: ${summary(tally)}`);
  assert.equal(tally.clientErrors, tally.byKind.short_stream ?? 0, summary(tally));
  assert.ok((tally.byKind.short_stream ?? 0) > 0, `the fault was really hit: ${summary(tally)}`);
  // Passive ejection keeps the broken node's share small.
  assert.ok((tally.byKind.short_stream ?? 0) < 40, summary(tally));
  assertNoLeaks(leaks, CONCURRENCY);
});

test('a stream that stalls past body_idle_timeout is ended cleanly and the node stops getting traffic', async () => {
  const { tally, leaks } = await runCase({
    bed,
    table,
    name: 'stream stall',
    note: 'tokens 2 s apart, body_idle_timeout 1.5 s',
    nodes: ['good-stall', 'bad-stall'],
    load: { requests: 120, concurrency: CONCURRENCY, seed: 202, model: 'm-stall' },
  });
  assert.equal(tally.avoidable, 0, summary(tally));
  assert.equal(tally.byKind.stream_socket_error ?? 0, 0, `SSE must end cleanly: ${summary(tally)}`);
  assert.equal(tally.clientErrors, tally.byKind.short_stream ?? 0, summary(tally));
  assert.ok((tally.byKind.short_stream ?? 0) > 0, `the stall was really hit: ${summary(tally)}`);
  assert.ok((tally.byKind.short_stream ?? 0) < 40, summary(tally));
  assertNoLeaks(leaks, CONCURRENCY);
});

test('clients aborting at random points (queued, before headers, mid-stream) release every lease and upstream request', async () => {
  const abortedBefore = await nodeAborts(['abort-a', 'abort-b']);
  const { tally, leaks } = await runCase({
    bed,
    table,
    name: 'client aborts at random points',
    nodes: ['abort-a', 'abort-b'],
    load: {
      requests: 160,
      concurrency: CONCURRENCY,
      seed: 203,
      spec: (_i, random) => {
        const spec = chatSpec('m-abort', random() < 0.6, { max_tokens: 30 });
        // A quarter never abort; the rest abort anywhere from before sending to the last token.
        return random() < 0.25 ? spec : { ...spec, abortAfterMs: Math.floor(random() * 500) };
      },
    },
  });
  assert.equal(tally.clientErrors, 0, summary(tally));
  assert.ok((tally.byKind.aborted ?? 0) > 30 && (tally.byKind.ok ?? 0) > 20, `aborts landed at many points: ${summary(tally)}`);
  assert.ok((await nodeAborts(['abort-a', 'abort-b'])) > abortedBefore, 'aborts reached the nodes');
  assertNoLeaks(leaks, CONCURRENCY);
});

test('a client that leaves before the node answers gets the upstream request aborted at once, not at headers_timeout', async () => {
  const hung = ['abort-a', 'abort-b'];
  const { tally, leaks } = await runCase({
    bed,
    table,
    name: 'client aborts before headers',
    note: 'both nodes hang; clients leave after 200 ms',
    nodes: hung,
    load: {
      requests: 8,
      concurrency: 8,
      seed: 205,
      spec: (_i, random) => ({ ...chatSpec('m-abort', random() < 0.5), abortAfterMs: 200 }),
    },
    arrange: async () => {
      for (const name of hung) await bed.setFaults(name, { inference: 'hang' });
    },
    restore: async () => {
      // Well inside headers_timeout (1.5 s): only the clients' leaving can have ended these.
      await eventually(async () => (await nodeInFlight(hung)) === 0, 600, 'the nodes to see their requests aborted');
      for (const name of hung) await bed.clearFaults(name);
    },
  });
  assert.equal(tally.byKind.aborted, 8, summary(tally));
  assertNoLeaks(leaks, 8);
});

test('a stream still running at total_timeout is ended cleanly and its upstream request aborted', async () => {
  const { tally, leaks } = await runCase({
    bed,
    table,
    name: 'stream past total_timeout',
    note: `${TOTAL_TIMEOUT_MS / 1000} s bound, 25 s answers`,
    nodes: ['long'],
    load: { requests: 4, concurrency: 4, seed: 204, spec: () => chatSpec('m-long', true, { max_tokens: 100 }) },
  });
  assert.equal(tally.byKind.short_stream, 4, summary(tally));
  for (const o of tally.outcomes) {
    const ms = o.endedAt - o.startedAt;
    assert.ok(ms >= TOTAL_TIMEOUT_MS - 100 && ms < TOTAL_TIMEOUT_MS + 2_000, `cut after ${ms} ms`);
  }
  assertNoLeaks(leaks, 4);
});

async function nodeInFlight(names: readonly string[]): Promise<number> {
  let total = 0;
  for (const name of names)
    total += (await httpJson('GET', `${bed.nodeUrl(name)}/__sim/stats`)).json<{ inFlight: number }>().inFlight;
  return total;
}

async function nodeAborts(names: readonly string[]): Promise<number> {
  let total = 0;
  for (const name of names)
    total += (await httpJson('GET', `${bed.nodeUrl(name)}/__sim/stats`)).json<{ clientAborted: number }>().clientAborted;
  return total;
}
