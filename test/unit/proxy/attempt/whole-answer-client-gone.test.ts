// A whole (non-stream) answer whose head has come is already generated: when the client leaves
// while its body is arriving, the body is still read (at most WHOLE_ANSWER_GRACE_MS, and the held
// bound in bytes), so the node's own usage is what is charged; past the grace the call is cut and
// the work estimated. The attempt runs for real over loopback (a node, a front server calling
// forwardAttempt, a client that leaves); the held-bytes budget shows when the answer is being held,
// and the exchange's timers run on a manual clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { EventEmitter, once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Pool, request } from 'undici';
import { ManualClock } from '#src/core/clock.ts';
import { forwardAttempt, WHOLE_ANSWER_GRACE_MS, type AttemptOutcome } from '#src/proxy/attempt/forward.ts';
import { HeldBytesBudget } from '#src/proxy/attempt/held-answer.ts';
import { onEmitter, untilEvent } from '#test/fixtures/events.ts';

/** The held-bytes budget, announcing each change of what it holds (something to wait on: events.ts). */
class AnnouncingBudget extends HeldBytesBudget {
  readonly changes = new EventEmitter();
  readonly changed = onEmitter(this.changes, 'the held bytes', 'change');

  override reserve(bytes: number): boolean {
    const taken = super.reserve(bytes);
    if (taken) this.changes.emit('change');
    return taken;
  }

  override unreserve(bytes: number): void {
    super.unreserve(bytes);
    this.changes.emit('change');
  }
}

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A node that sends its answer's head and half its body, and the rest (with its usage) only when told. */
async function halfAnswering(): Promise<{ url: string; server: Server; rest: () => void; aborted: () => boolean }> {
  let pending: ServerResponse | undefined;
  let aborted = false;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.on('close', () => {
        if (!res.writableFinished) aborted = true;
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hello"}}],');
      pending = res;
    });
  });
  const url = await listen(server);
  return {
    url,
    server,
    rest: () => pending?.end('"usage":{"prompt_tokens":11,"completion_tokens":77,"total_tokens":88}}'),
    aborted: () => aborted,
  };
}

async function leaveWhileHeld(
  release: (node: Awaited<ReturnType<typeof halfAnswering>>, clock: ManualClock) => void,
): Promise<{ outcome: AttemptOutcome; nodeAborted: boolean }> {
  const node = await halfAnswering();
  const pool = new Pool(node.url);
  const clock = new ManualClock();
  const heldBudget = new AnnouncingBudget(1 << 20);
  let frontRes: ServerResponse | undefined;
  const { promise: outcome, resolve } = Promise.withResolvers<AttemptOutcome>();
  const front = createServer((req, res) => {
    frontRes = res;
    req.resume();
    req.on('end', () => {
      forwardAttempt({
        pool,
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json' },
        body: Buffer.from('{"model":"m","messages":[]}'),
        res,
        nodeName: 'n',
        extraResponseHeaders: {},
        canFailOver: () => false,
        startedMs: clock.monotonicMs(),
        totalTimeoutMs: 0,
        clock,
        maxHeldBodyBytes: 1 << 20,
        heldBudget,
        work: { promptTokens: 20, completionCap: 100, choices: 1, rate: undefined },
      }).then(resolve, resolve);
    });
  });
  const frontUrl = await listen(front);
  try {
    const controller = new AbortController();
    const sent = request(`${frontUrl}/`, { method: 'POST', body: '{}', signal: controller.signal }).catch(
      (error: unknown) => error,
    );
    await untilEvent(() => heldBudget.held() > 0, [heldBudget.changed], 'the answer being held');
    controller.abort();
    await sent;
    if (frontRes === undefined) throw new Error('the front server had no request');
    await untilEvent(() => frontRes?.destroyed === true, [onEmitter(frontRes, 'the front response', 'close')], 'the client gone');
    release(node, clock);
    const result = await outcome;
    if (release !== cutAfterGrace)
      await untilEvent(() => heldBudget.held() === 0, [heldBudget.changed], 'the held bytes returned');
    return { outcome: result, nodeAborted: node.aborted() };
  } finally {
    await pool.close();
    await close(front);
    await close(node.server);
  }
}

const cutAfterGrace = (_node: unknown, clock: ManualClock): void => clock.advance(WHOLE_ANSWER_GRACE_MS);

test("the client leaves while a whole answer arrives: the rest is read, and the node's usage is charged", async () => {
  const { outcome } = await leaveWhileHeld((node) => node.rest());
  assert.equal(outcome.kind, 'client_gone');
  assert.deepEqual(outcome.kind === 'client_gone' ? outcome.usage : undefined, {
    promptTokens: 11,
    completionTokens: 77,
    counted: 'usage',
  });
});

test('the rest does not come within the grace: the call is cut, the work estimated', async () => {
  const { outcome } = await leaveWhileHeld(cutAfterGrace);
  assert.equal(outcome.kind, 'client_gone');
  assert.deepEqual(outcome.kind === 'client_gone' ? outcome.usage : undefined, {
    promptTokens: 20,
    completionTokens: 0,
    counted: 'estimated',
    basis: 'prompt',
  });
});
