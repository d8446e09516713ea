// Faulty clients: malformed JSON, bodies over the limit, huge headers, slowloris, prompts larger
// than a node's context. Each gets its proper refusal (or a node that fits) while well-behaved
// requests mixed into the same load are unaffected, and nothing stays held afterwards.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import {
  assertNoLeaks,
  chatSpec,
  FaultBed,
  FigureTable,
  pause,
  runCase,
  simNode,
  summary,
  type RequestSpec,
} from '#test/faults/harness.ts';

const CONCURRENCY = 12;
const HEADER_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 3_000;
const table = new FigureTable('Client faults (mixed with well-formed requests)');
let bed: FaultBed;

before(async () => {
  bed = await FaultBed.start({
    fleet: [
      simNode('node-a', 'vllm', ['m']),
      simNode('node-b', 'llamacpp', ['m']),
      // Same model, different contexts: 512 tokens (llama.cpp) and 8192 (vLLM).
      simNode('ctx-small', 'llamacpp', ['m-ctx'], { context: 512, slots: 4 }),
      simNode('ctx-big', 'vllm', ['m-ctx'], { context: 8192 }),
    ].join('\n\n'),
    server: [
      'max_request_body_bytes = "64KiB"',
      'max_header_bytes = "16KiB"',
      `header_timeout = "${HEADER_TIMEOUT_MS}ms"`,
      `request_timeout = "${REQUEST_TIMEOUT_MS}ms"`,
    ].join('\n'),
    // These cases are about clients: a node slow to answer on a busy machine is not one of them.
    upstream: { headers_timeout: '30s' },
  });
});

after(async () => {
  table.print();
  await bed?.stop();
});

const MALFORMED: readonly string[] = [
  '{"model": "m", "messages": [',
  'not json at all',
  '[1, 2, 3]',
  '"just a string"',
  '',
  '{"model": 42, "messages": []}',
  // Valid JSON the node rejects: its own 400 passes through.
  '{"model": "m", "messages": "not a list"}',
];

/** Every `share`-th request (seeded) is the faulty one, expecting `status`; the rest are normal. */
function mixed(share: number, faulty: (random: () => number) => RequestSpec): (i: number, random: () => number) => RequestSpec {
  return (_i, random) => (random() < share ? faulty(random) : chatSpec('m', random() < 0.5));
}

function pick<T>(items: readonly T[], random: () => number): T {
  const item = items[Math.floor(random() * items.length)];
  assert.ok(item !== undefined);
  return item;
}

test('malformed client JSON gets 400 and never reaches a node, beside well-formed requests that succeed', async () => {
  const { tally, leaks } = await runCase({
    bed,
    table,
    name: 'malformed client JSON',
    nodes: ['node-a', 'node-b'],
    load: {
      requests: 160,
      concurrency: CONCURRENCY,
      seed: 401,
      spec: mixed(0.4, (random) => ({
        path: '/v1/chat/completions',
        payload: pick(MALFORMED, random),
        stream: false,
        expectStatus: 400,
      })),
    },
  });
  assert.equal(tally.clientErrors, 0, summary(tally));
  assert.ok(tally.expected > 30, summary(tally));
  assertNoLeaks(leaks, CONCURRENCY);
});

test('a body over max_request_body_bytes gets 413, sent or declared, and the connection stays usable for others', async () => {
  const { tally, leaks } = await runCase({
    bed,
    table,
    name: 'oversized body',
    note: '70 KB–6 MB against 64 KiB',
    nodes: ['node-a', 'node-b'],
    load: {
      requests: 120,
      concurrency: CONCURRENCY,
      seed: 402,
      spec: mixed(0.3, (random) => {
        // Half just over the limit, half several MB: a client still writing those when the
        // connection closes sees a broken pipe instead of the 413.
        const size = random() < 0.5 ? 70_000 + Math.floor(random() * 1_000_000) : 3_000_000 + Math.floor(random() * 3_000_000);
        const pad = 'x'.repeat(size);
        return { ...chatSpec('m', false, { pad }), expectStatus: 413 };
      }),
    },
  });
  assert.equal(tally.clientErrors, 0, summary(tally));
  assert.ok(tally.expected > 15, summary(tally));
  assertNoLeaks(leaks, CONCURRENCY);
});

test('request headers over max_header_bytes get 431, beside requests that succeed', async () => {
  const { tally, leaks } = await runCase({
    bed,
    table,
    name: 'huge headers',
    note: '20–60 KB of headers against 16 KiB',
    nodes: ['node-a', 'node-b'],
    load: {
      requests: 120,
      concurrency: CONCURRENCY,
      seed: 403,
      spec: mixed(0.3, (random) => ({
        ...chatSpec('m', random() < 0.5),
        headers: { 'x-padding': 'p'.repeat(20_000 + Math.floor(random() * 40_000)) },
        expectStatus: 431,
      })),
    },
  });
  assert.equal(tally.clientErrors, 0, summary(tally));
  assert.ok(tally.expected > 15, summary(tally));
  assertNoLeaks(leaks, CONCURRENCY);
});

test('slowloris clients (trickled headers or body) are cut off at the server timeouts while others are served', async () => {
  const cutAfterMs: { kind: 'headers' | 'body'; ms: number }[] = [];
  const { tally, leaks } = await runCase({
    bed,
    table,
    name: 'slowloris',
    note: '20 trickled heads, 10 trickled bodies',
    nodes: ['node-a', 'node-b'],
    load: { requests: 120, concurrency: CONCURRENCY, seed: 404, paceMs: 250 },
    during: async () => {
      const slow = [
        ...Array.from({ length: 20 }, () => trickle('headers')),
        ...Array.from({ length: 10 }, () => trickle('body')),
      ];
      cutAfterMs.push(...(await Promise.all(slow)));
    },
  });
  assert.equal(tally.clientErrors, 0, summary(tally));
  assert.equal(cutAfterMs.length, 30);
  // Cut by the timeouts, not by something else earlier (e.g. a 413 for the declared length).
  assert.ok(
    cutAfterMs.every((cut) => cut.ms >= (cut.kind === 'headers' ? HEADER_TIMEOUT_MS : REQUEST_TIMEOUT_MS) - 100),
    JSON.stringify(cutAfterMs),
  );
  const slack = 2_000;
  for (const cut of cutAfterMs) {
    const bound = (cut.kind === 'headers' ? HEADER_TIMEOUT_MS : REQUEST_TIMEOUT_MS) + slack;
    assert.ok(cut.ms < bound, `a slow ${cut.kind} client held its socket ${cut.ms} ms (bound ${bound} ms)`);
  }
  assertNoLeaks(leaks, CONCURRENCY);
});

test('a prompt too long for one node goes to the node whose context fits it, and one too long for all gets 400', async () => {
  const { tally, leaks } = await runCase({
    bed,
    table,
    name: 'context overflow',
    note: 'contexts 512 and 8192 tokens',
    nodes: ['ctx-small', 'ctx-big'],
    load: {
      requests: 120,
      concurrency: CONCURRENCY,
      seed: 405,
      spec: (_i, random) => {
        const roll = random();
        const stream = random() < 0.5;
        // "lorem" is 2 tokens: ~40, ~600–1800 and ~10 000 token prompts.
        if (roll < 0.5) return chatSpec('m-ctx', stream, { messages: [{ role: 'user', content: 'lorem '.repeat(20) }] });
        if (roll < 0.85) {
          const words = 300 + Math.floor(random() * 600);
          return chatSpec('m-ctx', stream, { messages: [{ role: 'user', content: 'lorem '.repeat(words) }] });
        }
        return {
          ...chatSpec('m-ctx', stream, { messages: [{ role: 'user', content: 'lorem '.repeat(5_000) }] }),
          expectStatus: 400,
        };
      },
    },
  });
  assert.equal(tally.clientErrors, 0, summary(tally));
  assert.ok(tally.expected > 5, summary(tally));
  const refusal = tally.outcomes.find((o) => o.kind === 'expected');
  assert.match(refusal?.detail ?? '', /context_length_exceeded/);
  assertNoLeaks(leaks, CONCURRENCY);
});

/** A raw client that sends part of a request, then one more line every 200 ms; resolves with how long the server let it live. */
async function trickle(kind: 'headers' | 'body'): Promise<{ kind: 'headers' | 'body'; ms: number }> {
  const { hostname, port } = new URL(bed.url);
  const socket: Socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  socket.on('data', () => {});
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const started = Date.now();
  socket.write(
    kind === 'headers'
      ? 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n'
      : 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n{"model":"m",',
  );
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const bound = Date.now() + 15_000;
  let open = true;
  void closed.then(() => {
    open = false;
  });
  while (open && Date.now() < bound) {
    socket.write(kind === 'headers' ? 'X-Slow: 1\r\n' : ' ');
    await pause(200);
  }
  socket.destroy();
  return { kind, ms: Date.now() - started };
}
