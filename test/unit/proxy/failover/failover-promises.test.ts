// The attempt and the failover loop are driven by callbacks (issue 39's footprint): a whole JSON
// answer, and a streamed one, go from a loopback node to a loopback client through runFailover with
// one promise made by proxy/attempt/ and proxy/failover/ per request — the run's own — whatever
// else in the process makes promises. Promises are told apart by the stack that made them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { Buffer } from 'node:buffer';
import { createServer, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { systemClock } from '#src/core/clock.ts';
import { HeldBytesBudget } from '#src/proxy/attempt/held-answer.ts';
import type { AttemptOutcome } from '#src/proxy/attempt/attempt-outcome.ts';
import { runFailover, type AttemptSetting, type FailoverEnd, type TargetSource } from '#src/proxy/failover/failover-loop.ts';
import { startFailover } from '#src/proxy/failover/attempt-feedback.ts';
import type { Target } from '#src/proxy/failover/target.ts';
import { request } from '#test/fixtures/builders.ts';

const JSON_ANSWER = JSON.stringify({
  choices: [{ message: { content: 'hi' } }],
  usage: { prompt_tokens: 3, completion_tokens: 1 },
});
const SSE_ANSWER = 'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n';

/** Where a promise made by the attempt or the failover loop comes from. */
const OURS = /\/src\/proxy\/(attempt|failover)\//;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function target(pool: Pool, outcomes: AttemptOutcome[]): Target {
  return {
    id: { kind: 'node', name: 'n1' },
    label: 'n1',
    prepare: () => ({
      kind: 'send',
      call: {
        pool,
        path: '/v1/chat/completions',
        headers: {},
        extraResponseHeaders: {},
        passOnErrors: true,
        headersTimeoutMs: undefined,
      },
    }),
    canFailOver: () => false,
    release: () => {},
    conclude: (outcome) => {
      outcomes.push(outcome);
      return { next: 'answered', status: 200, figures: {} };
    },
  };
}

/** One request through the loop; the promises ours made between its arrival and the run's end. */
async function oneRequest(
  answer: 'json' | 'sse',
): Promise<{ ours: string[]; outcome: AttemptOutcome | undefined; body: string }> {
  const node = createServer((_req, res) => {
    if (answer === 'json') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON_ANSWER);
    else res.writeHead(200, { 'content-type': 'text/event-stream' }).end(SSE_ANSWER);
  });
  const pool = new Pool(await listen(node));
  const ours: string[] = [];
  const outcomes: AttemptOutcome[] = [];
  let counting = false;
  const hook = createHook({
    init(_id, type) {
      if (!counting || type !== 'PROMISE') return;
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 50;
      const stack = new Error().stack ?? '';
      Error.stackTraceLimit = limit;
      if (OURS.test(stack)) ours.push(stack);
    },
  });
  let ran: Promise<FailoverEnd> | undefined;
  const gateway = createServer((_req, res: ServerResponse) => {
    counting = true;
    const setting: AttemptSetting = {
      res,
      body: Buffer.from('{}'),
      startedMs: systemClock.monotonicMs(),
      totalTimeoutMs: 0,
      clock: systemClock,
      maxHeldBodyBytes: 1 << 20,
      heldBudget: new HeldBytesBudget(1 << 20),
      finish: () => {},
      onAttempt: () => {},
    };
    let given = false;
    const source: TargetSource = {
      next: () => {
        if (given) return { kind: 'none', stop: false };
        given = true;
        return { kind: 'target', target: target(pool, outcomes) };
      },
    };
    ran = runFailover([source], setting, startFailover(request('m')));
    void ran.finally(() => void (counting = false));
  });
  hook.enable();
  try {
    const origin = new URL(await listen(gateway));
    const body = await new Promise<string>((resolve, reject) => {
      const req = httpRequest({ host: origin.hostname, port: origin.port, method: 'POST', path: '/' }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString()));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end('{}');
    });
    assert.deepEqual(await ran, { kind: 'answered' });
    return { ours, outcome: outcomes[0], body };
  } finally {
    hook.disable();
    await pool.close();
    gateway.closeAllConnections();
    node.closeAllConnections();
    await new Promise<void>((resolve) => gateway.close(() => resolve()));
    await new Promise<void>((resolve) => node.close(() => resolve()));
  }
}

for (const answer of ['json', 'sse'] as const) {
  test(`a ${answer} answer through the failover loop: one promise made by the attempt and the loop, the run's`, async () => {
    const { ours, outcome, body } = await oneRequest(answer);
    assert.equal(body, answer === 'json' ? JSON_ANSWER : SSE_ANSWER, 'the client got the answer');
    assert.equal(outcome?.kind, 'delivered');
    assert.equal(ours.length, 1, `promises made by proxy/attempt or proxy/failover:\n${ours.join('\n\n')}`);
    assert.match(ours[0] ?? '', /runFailover/);
  });
}
