// The model event stream's bounds and reconnects, on a manual clock against a scripted dispatcher:
// each stop names its reason; the back-off doubles and resets once a stream carried a frame; a node
// without the route is asked again only after unsupportedRetryMs; a silent stream is given up and
// asked again at once; no answer head within connectTimeoutMs stops it; close() is final.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Buffer } from 'node:buffer';
import { ManualClock } from '#src/core/clock.ts';
import type { ExchangeController, ExchangeDispatcher, ExchangeHandler, ExchangeRequest } from '#src/core/bounded-exchange.ts';
import { ModelEventStream, type ModelEventLimits, type StreamStop } from '#src/discovery/index.ts';

const LIMITS: ModelEventLimits = {
  maxFrameBytes: 64,
  framesPerSecond: 2,
  burstFrames: 3,
  idleTimeoutMs: 5_000,
  connectTimeoutMs: 1_000,
  backoffMinMs: 100,
  backoffMaxMs: 400,
  unsupportedRetryMs: 60_000,
};

interface Call {
  readonly request: ExchangeRequest;
  readonly handler: ExchangeHandler;
  aborted: string | undefined;
}

function rig(): {
  clock: ManualClock;
  calls: Call[];
  stops: StreamStop[];
  frames: unknown[];
  opens: number[];
  stream: ModelEventStream;
} {
  const clock = new ManualClock(0);
  const calls: Call[] = [];
  const dispatcher: ExchangeDispatcher = {
    dispatch(request, handler) {
      const call: Call = { request, handler, aborted: undefined };
      calls.push(call);
      const controller: ExchangeController = {
        abort: (reason) => {
          call.aborted = reason.message;
        },
      };
      handler.onRequestStart(controller, {});
      return true;
    },
  };
  const stops: StreamStop[] = [];
  const frames: unknown[] = [];
  const opens: number[] = [];
  const stream = new ModelEventStream({
    clock,
    dispatcher,
    url: 'http://127.0.0.1:9/',
    path: '/models/sse',
    apiKey: 'secret',
    limits: LIMITS,
    onOpen: () => opens.push(clock.now()),
    onFrame: (data, error) => frames.push(error ?? data),
    onStop: (stop) => stops.push(stop),
  });
  return { clock, calls, stops, frames, opens, stream };
}

const controller: ExchangeController = { abort: () => {} };
const open = (call: Call | undefined): void =>
  call?.handler.onResponseStart(controller, 200, { 'content-type': 'text/event-stream' }, 'OK');
const send = (call: Call | undefined, text: string): void => call?.handler.onResponseData(controller, Buffer.from(text));

test('asks the path with the key, opens, reads frames; a frame that is not JSON is reported and skipped', () => {
  const { calls, frames, opens, stream } = rig();
  stream.start();
  assert.equal(calls[0]?.request.path, '/models/sse');
  assert.equal(calls[0]?.request.origin, 'http://127.0.0.1:9');
  assert.equal(calls[0]?.request.headers?.['authorization'], 'Bearer secret');
  open(calls[0]);
  assert.deepEqual(opens, [0]);
  send(calls[0], 'data: {"a":1}\n\ndata: nope\n\n');
  assert.deepEqual(frames[0], { a: 1 });
  assert.match(String(frames[1]), /^frame is not JSON/);
  assert.equal(stream.state().open, true);
  assert.equal(stream.state().frames, 2);
  stream.close();
  assert.match(calls[0]?.aborted ?? '', /closed/);
});

test('the back-off doubles to its bound on repeated failures and resets once a stream carried a frame', () => {
  const { clock, calls, stops, stream } = rig();
  stream.start();
  const fail = (): void => calls.at(-1)?.handler.onResponseError(controller, new Error('ECONNREFUSED'));
  fail();
  fail(); // the same call again: ignored, one stop per attempt
  assert.deepEqual(
    stops.map((s) => [s.reason, s.retryInMs]),
    [['failed', 100]],
  );
  for (const wait of [100, 200, 400]) {
    clock.advance(wait - 1);
    const count = calls.length;
    assert.equal(calls.length, count);
    clock.advance(1);
    assert.equal(calls.length, count + 1, `reconnected after ${wait} ms`);
    fail();
  }
  assert.deepEqual(
    stops.map((s) => s.retryInMs),
    [100, 200, 400, 400],
  );
  clock.advance(400);
  open(calls.at(-1));
  send(calls.at(-1), 'data: {}\n\n');
  calls.at(-1)?.handler.onResponseEnd(controller, {});
  assert.deepEqual(stops.at(-1), { reason: 'ended', detail: 'the node ended the stream', retryInMs: 100 });
  stream.close();
});

test('a node without the route keeps the poll only, asked again after unsupportedRetryMs', () => {
  const { clock, calls, stops, stream } = rig();
  stream.start();
  calls[0]?.handler.onResponseStart(controller, 404, {}, 'Not Found');
  assert.deepEqual(stops[0], {
    reason: 'unsupported',
    detail: 'answered HTTP 404: the node has no model event stream',
    retryInMs: 60_000,
  });
  clock.advance(59_999);
  assert.equal(calls.length, 1);
  clock.advance(1);
  assert.equal(calls.length, 2);
  calls[1]?.handler.onResponseStart(controller, 200, { 'content-type': 'application/json' }, 'OK');
  assert.equal(stops[1]?.reason, 'unsupported');
  assert.match(stops[1]?.detail ?? '', /not an event stream/);
  stream.close();
});

test('no answer head within connectTimeoutMs, and a silent stream, are stopped with their reason', () => {
  const { clock, calls, stops, stream } = rig();
  stream.start();
  clock.advance(1_000);
  assert.deepEqual(stops[0], { reason: 'connect_timeout', detail: 'no answer within 1000 ms', retryInMs: 100 });
  assert.ok(calls[0]?.aborted !== undefined, 'the connection is aborted');
  clock.advance(100);
  open(calls[1]);
  clock.advance(4_999);
  send(calls[1], 'data: {}\n\n');
  clock.advance(4_999);
  assert.equal(stops.length, 1, 'a frame restarts the idle bound');
  clock.advance(1);
  assert.deepEqual(stops[1], { reason: 'idle', detail: 'no frame for 5000 ms', retryInMs: 0 });
  clock.advance(0);
  assert.equal(calls.length, 3, 'asked again at once');
  stream.close();
});

test('frames over the rate and a frame over the size stop the stream with their reason', () => {
  const { clock, calls, stops, frames, stream } = rig();
  stream.start();
  open(calls[0]);
  send(calls[0], 'data: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4\n\n');
  assert.deepEqual(frames, [1, 2, 3]);
  assert.equal(stops[0]?.reason, 'too_fast');
  assert.match(calls[0]?.aborted ?? '', /too_fast/);
  clock.advance(stops[0]?.retryInMs ?? 0);
  open(calls[1]);
  // After a second the bucket holds 2 more frames (2 a second), on top of the burst left.
  send(calls[1], 'data: 5\n\n');
  send(calls[1], `data: ${'x'.repeat(80)}\n\n`);
  assert.equal(stops[1]?.reason, 'frame_too_large');
  assert.equal(stops[1]?.detail, 'a frame exceeds the limit of 64 bytes');
  stream.close();
});

test('close() is final: no reconnect after it', () => {
  const { clock, calls, stops, stream } = rig();
  stream.start();
  stream.close();
  clock.advance(120_000);
  assert.equal(calls.length, 1);
  assert.deepEqual(stops, [], 'a close is not reported as a stop');
  assert.equal(stream.state().lastStop?.reason, 'closed');
});
