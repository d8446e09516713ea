// Which attempts have a first-token deadline, how long, and from when (attempt/first-token-deadline.ts);
// and the attempt's clock: the deadline aborts a silent attempt, told apart from the client leaving.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { ManualClock } from '#src/core/clock.ts';
import { firstTokenDeadline, firstTokenTimeoutError, type FirstTokenFacts } from '#src/proxy/attempt/first-token-deadline.ts';
import { AttemptExchange } from '#src/proxy/attempt/attempt-exchange.ts';
import { HeldBytesBudget } from '#src/proxy/attempt/held-answer.ts';
import { unanswered } from '#src/proxy/attempt/forward.ts';
import { Pool } from 'undici';

const facts = (over: Partial<FirstTokenFacts>): FirstTokenFacts => ({
  streams: true,
  configuredMs: 120_000,
  nodeMs: undefined,
  loadsModel: false,
  ...over,
});

test('the deadline by the request and the node', () => {
  const cases: [string, Partial<FirstTokenFacts>, ReturnType<typeof firstTokenDeadline>][] = [
    ['a stream: the [upstream] deadline from sending', {}, { timeoutMs: 120_000, fromHead: false }],
    ['no stream: none (its answer comes whole, after generation)', { streams: false }, undefined],
    ['the node’s own deadline wins', { nodeMs: 600_000 }, { timeoutMs: 600_000, fromHead: false }],
    ['the node’s 0 turns it off for that node', { nodeMs: 0 }, undefined],
    ['[upstream] 0 turns it off', { configuredMs: 0 }, undefined],
    [
      'a node’s own deadline where [upstream] has none',
      { configuredMs: 0, nodeMs: 5_000 },
      { timeoutMs: 5_000, fromHead: false },
    ],
    ['a request that loads its model: from the answer’s head', { loadsModel: true }, { timeoutMs: 120_000, fromHead: true }],
    ['a load that does not stream: none', { loadsModel: true, streams: false }, undefined],
  ];
  for (const [what, over, expected] of cases) assert.deepEqual(firstTokenDeadline(facts(over)), expected, what);
});

function response(): ServerResponse {
  return new ServerResponse(new IncomingMessage(new Socket()));
}

const request = { pool: new Pool('http://127.0.0.1:1'), path: '/v1/chat/completions', headers: {}, body: Buffer.alloc(0) };

test('a silent attempt is aborted at the deadline: a timeout naming it, not the client leaving', () => {
  const clock = new ManualClock();
  const deadline = { timeoutMs: 30_000, fromHead: false };
  const exchange = new AttemptExchange(response(), clock, 0, new HeldBytesBudget(100), undefined, deadline);
  assert.equal(exchange.awaitingFirstToken(), true);
  clock.advance(29_999);
  assert.equal(exchange.signal.aborted, false);
  clock.advance(1);
  assert.equal(exchange.signal.aborted, true);
  assert.equal(exchange.clientLeft(), false);
  assert.equal(exchange.firstTokenTimeout(), firstTokenTimeoutError(deadline));
  assert.deepEqual(unanswered(new Error('aborted'), request, exchange), {
    kind: 'failed',
    result: 'timeout',
    error: 'no first token within 30000ms of sending the request (upstream.first_token_timeout)',
  });
  exchange.close();
  assert.equal(clock.pendingTimers(), 0);
});

test('the first token cancels the deadline', () => {
  const clock = new ManualClock();
  const exchange = new AttemptExchange(response(), clock, 0, new HeldBytesBudget(100), undefined, {
    timeoutMs: 1_000,
    fromHead: false,
  });
  exchange.headersArrived();
  clock.advance(500);
  exchange.firstTokenCame();
  assert.equal(exchange.awaitingFirstToken(), false);
  clock.advance(10_000);
  assert.equal(exchange.signal.aborted, false);
  assert.equal(exchange.firstTokenTimeout(), undefined);
  exchange.close();
});

test('a loading attempt’s deadline starts at the answer’s head: only load_timeout bounds the load', () => {
  const clock = new ManualClock();
  const deadline = { timeoutMs: 1_000, fromHead: true };
  const exchange = new AttemptExchange(response(), clock, 0, new HeldBytesBudget(100), 120_000, deadline);
  clock.advance(60_000);
  assert.equal(exchange.signal.aborted, false, 'loading past the deadline is not abandoned');
  exchange.headersArrived();
  clock.advance(999);
  assert.equal(exchange.signal.aborted, false);
  clock.advance(1);
  assert.equal(exchange.signal.aborted, true);
  assert.equal(exchange.loadTimedOut(), false);
  assert.match(String(exchange.firstTokenTimeout()), /within 1000ms after the answer head/);
  exchange.close();
});
