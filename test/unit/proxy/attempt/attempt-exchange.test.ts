import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { getEventListeners } from 'node:events';
import { Dispatcher } from 'undici';
import { ManualClock } from '#src/core/clock.ts';
import { AttemptExchange } from '#src/proxy/attempt/attempt-exchange.ts';
import { HeldBytesBudget } from '#src/proxy/attempt/held-budget.ts';
import { unanswered } from '#src/proxy/attempt/send-attempt.ts';
import { UpstreamCall } from '#src/proxy/attempt/upstream-call.ts';

function response(): ServerResponse {
  return new ServerResponse(new IncomingMessage(new Socket()));
}

test('the total timeout aborts the attempt, and is told apart from the client leaving', () => {
  const clock = new ManualClock();
  const exchange = new AttemptExchange(response(), clock, 1_000, new HeldBytesBudget(100));
  clock.advance(999);
  assert.equal(exchange.signal.aborted, false);
  clock.advance(1);
  assert.equal(exchange.signal.aborted, true);
  assert.equal(exchange.timedOut(), true);
  assert.equal(exchange.clientLeft(), false);
  exchange.close();
});

test('the response closing early is the client leaving; closing cancels the timer', () => {
  const clock = new ManualClock();
  const res = response();
  const exchange = new AttemptExchange(res, clock, 1_000, new HeldBytesBudget(100));
  res.emit('close');
  assert.equal(exchange.clientLeft(), true);
  assert.equal(exchange.timedOut(), false);
  exchange.close();
  assert.equal(clock.pendingTimers(), 0);
});

test('a whole answer being read when the client leaves is read on for the grace, then cut; the abort time is kept', () => {
  const clock = new ManualClock();
  const res = response();
  const exchange = new AttemptExchange(res, clock, 0, new HeldBytesBudget(100));
  exchange.readingWholeAnswer(2_000);
  clock.advance(500);
  res.emit('close');
  assert.equal(exchange.clientLeft(), true, 'the client left');
  assert.equal(exchange.signal.aborted, false, 'the answer is still read');
  assert.equal(exchange.abortedAtMs, undefined);
  clock.advance(1_999);
  assert.equal(exchange.signal.aborted, false);
  clock.advance(1);
  assert.equal(exchange.signal.aborted, true, 'cut after the grace');
  assert.equal(exchange.abortedAtMs, clock.monotonicMs());
  exchange.close();
  assert.equal(clock.pendingTimers(), 0);
});

test('without a whole answer being read, the client leaving aborts at once, at a known time', () => {
  const clock = new ManualClock();
  const res = response();
  const exchange = new AttemptExchange(res, clock, 0, new HeldBytesBudget(100));
  clock.advance(700);
  res.emit('close');
  assert.equal(exchange.signal.aborted, true);
  assert.equal(exchange.abortedAtMs, clock.monotonicMs());
  exchange.close();
});

test('no total timeout schedules no timer', () => {
  const clock = new ManualClock();
  new AttemptExchange(response(), clock, 0, new HeldBytesBudget(100)).close();
  assert.equal(clock.pendingTimers(), 0);
});

test('held bytes are released at close, or once the response is sent when they were written to it', () => {
  const budget = new HeldBytesBudget(100);
  const unsent = new AttemptExchange(response(), new ManualClock(), 0, budget);
  assert.equal(unsent.reservation.take(40), true);
  unsent.close();
  assert.equal(budget.held(), 0);

  const res = response();
  const written = new AttemptExchange(res, new ManualClock(), 0, budget);
  assert.equal(written.reservation.take(60), true);
  written.heldBytesWritten();
  written.close();
  assert.equal(budget.held(), 60, 'still in memory until the response is sent');
  res.emit('close');
  assert.equal(budget.held(), 0);
});

/** A node that takes the request and never answers: the attempt waits until it is aborted. */
class SilentPool extends Dispatcher {
  aborted: unknown;
  override dispatch(_options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const controller: Dispatcher.DispatchController = {
      aborted: false,
      paused: false,
      reason: null,
      abort: (reason) => {
        this.aborted = reason;
        handler.onResponseError?.(controller, reason);
      },
      pause: () => {},
      resume: () => {},
    };
    handler.onRequestStart?.(controller, {});
    return true;
  }
}

test("the attempt's call is told of the abort by the exchange: no EventTarget listener on its signal per attempt", async () => {
  const exchange = new AttemptExchange(response(), new ManualClock(), 0, new HeldBytesBudget(100));
  const pool = new SilentPool();
  const request = { pool, path: '/v1/chat/completions', headers: {}, body: Buffer.alloc(0) };
  const { promise: head, resolve, reject } = Promise.withResolvers<unknown>();
  new UpstreamCall(exchange, { onHead: resolve, onNoHead: reject }).send(pool, request);
  assert.equal(getEventListeners(exchange.signal, 'abort').length, 0);
  const reason = new Error('client closed the connection');
  exchange.abort(reason);
  assert.equal(pool.aborted, reason, 'the request under way is aborted with the reason');
  const why = await head.then(
    () => assert.fail('no head came'),
    (error: unknown) => error,
  );
  assert.deepEqual(unanswered(why, request, exchange), { kind: 'client_gone', status: undefined });
  exchange.close();
});
