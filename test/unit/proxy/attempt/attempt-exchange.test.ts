import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Buffer } from 'node:buffer';
import { Socket } from 'node:net';
import { getEventListeners } from 'node:events';
import { Dispatcher } from 'undici';
import { ManualClock } from '#src/core/clock.ts';
import { AttemptExchange, type BodyFeed, type BodySink } from '#src/proxy/attempt/attempt-exchange.ts';
import { HeldBytesBudget } from '#src/proxy/attempt/held-answer.ts';
import { UpstreamCall, unanswered } from '#src/proxy/attempt/forward.ts';
import { TestFeed } from '#test/fixtures/test-feed.ts';

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

// The body feed between undici's dispatch handler and the strategy reading an answer: chunks that
// come before a reader wait (and pause the producer past a bound), a reader that stops leaves the
// rest for the next one, the end and a failure reach the reader after every queued chunk.

/** Records what it is told; `stopAfter` detaches it after that many chunks, as a held read does. */
function recorder(feed: BodyFeed, stopAfter = Infinity): BodySink & { readonly seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    onData: (chunk) => {
      seen.push(chunk.toString());
      if (seen.length >= stopAfter) feed.detach();
    },
    onEnd: () => seen.push('<end>'),
    onError: (error) => seen.push(`<error: ${error.message}>`),
  };
}

const cases: ReadonlyArray<{ name: string; before: (f: TestFeed) => void; after: (f: TestFeed) => void; seen: string[] }> = [
  {
    name: 'all before the reader',
    before: (f) => (f.chunk('a'), f.chunk('b'), f.end()),
    after: () => {},
    seen: ['a', 'b', '<end>'],
  },
  {
    name: 'split around the reader',
    before: (f) => f.chunk('a'),
    after: (f) => (f.chunk('b'), f.end()),
    seen: ['a', 'b', '<end>'],
  },
  {
    name: 'failure after queued chunks',
    before: (f) => (f.chunk('a'), f.fail('reset')),
    after: () => {},
    seen: ['a', '<error: reset>'],
  },
  {
    name: 'failure after the end is ignored',
    before: (f) => (f.chunk('a'), f.end(), f.fail('late')),
    after: () => {},
    seen: ['a', '<end>'],
  },
  { name: 'end after the reader', before: () => {}, after: (f) => f.end(), seen: ['<end>'] },
];

for (const c of cases) {
  test(`body feed: ${c.name}`, () => {
    const feed = new TestFeed();
    c.before(feed);
    const sink = recorder(feed);
    feed.attach(sink);
    c.after(feed);
    assert.deepEqual(sink.seen, c.seen);
    assert.deepEqual(feed.controls, []);
  });
}

test('a reader that stops leaves the rest, the end included, for the next reader', () => {
  const feed = new TestFeed();
  feed.chunk('a');
  feed.chunk('b');
  feed.chunk('c');
  feed.end();
  const first = recorder(feed, 2);
  feed.attach(first);
  assert.deepEqual(first.seen, ['a', 'b']);
  const second = recorder(feed);
  feed.attach(second);
  assert.deepEqual(second.seen, ['c', '<end>']);
});

test('chunks queued with no reader pause the producer past 64 KiB; the reader resumes it', () => {
  const feed = new TestFeed();
  feed.chunk(Buffer.alloc(40 * 1024));
  assert.deepEqual(feed.controls, []);
  feed.chunk(Buffer.alloc(40 * 1024));
  assert.deepEqual(feed.controls, ['pause']);
  feed.chunk(Buffer.alloc(1));
  assert.deepEqual(feed.controls, ['pause'], 'paused once');
  const sink = recorder(feed);
  feed.attach(sink);
  assert.equal(sink.seen.length, 3);
  assert.deepEqual(feed.controls, ['pause', 'resume']);
});
