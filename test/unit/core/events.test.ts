import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFERRED_CAPACITY, EventBus } from '#src/core/events.ts';

interface TestEvents {
  tick: { readonly n: number; readonly result: string };
}

const fixedClock = (start: number): { now(): number; advance(ms: number): void } => {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
};

test('on runs at every emit; a throwing listener is isolated and reported', () => {
  const errors: unknown[] = [];
  const bus = new EventBus<TestEvents>((error) => errors.push(error));
  const seen: number[] = [];
  bus.on('tick', () => {
    throw new Error('boom');
  });
  const off = bus.on('tick', (e) => seen.push(e.n));
  bus.emit('tick', { n: 1, result: 'success' });
  off();
  bus.emit('tick', { n: 2, result: 'success' });
  assert.deepEqual(seen, [1]);
  assert.equal(errors.length, 2);
});

test('onUnless is not called for a payload whose field holds one of the values, and is for the rest', () => {
  const bus = new EventBus<TestEvents>();
  const seen: string[] = [];
  const off = bus.onUnless('tick', 'result', new Set(['success', 'client_abort']), (e) => seen.push(`${e.n}:${e.result}`));
  bus.emit('tick', { n: 1, result: 'success' });
  bus.emit('tick', { n: 2, result: 'http_5xx' });
  bus.emit('tick', { n: 3, result: 'client_abort' });
  bus.emit('tick', { n: 4, result: 'timeout' });
  off();
  bus.emit('tick', { n: 5, result: 'timeout' });
  assert.deepEqual(seen, ['2:http_5xx', '4:timeout']);
});

test('a deferred listener runs for every payload in order, with the time of its emit, when flushed', () => {
  const clock = fixedClock(1_000);
  const bus = new EventBus<TestEvents>();
  const seen: string[] = [];
  bus.deferred('tick', (e, at) => seen.push(`${e.n}@${at}`), clock);
  bus.emit('tick', { n: 1, result: 'success' });
  clock.advance(10);
  bus.emit('tick', { n: 2, result: 'success' });
  clock.advance(10);
  assert.deepEqual(seen, [], 'nothing runs at the emit');
  bus.flush();
  assert.deepEqual(seen, ['1@1000', '2@1010']);
  bus.flush();
  assert.deepEqual(seen, ['1@1000', '2@1010'], 'each payload is handed over once');
});

test('a deferred listener runs by itself when its journal is full, and for the rest when unsubscribed', () => {
  const bus = new EventBus<TestEvents>();
  const seen: number[] = [];
  const off = bus.deferred('tick', (e, at) => {
    assert.equal(at, 0, 'no clock: no time');
    seen.push(e.n);
  });
  for (let n = 1; n <= DEFERRED_CAPACITY + 3; n++) bus.emit('tick', { n, result: 'success' });
  assert.equal(seen.length, DEFERRED_CAPACITY);
  off();
  assert.deepEqual(
    seen,
    Array.from({ length: DEFERRED_CAPACITY + 3 }, (_, i) => i + 1),
  );
  bus.emit('tick', { n: 0, result: 'success' });
  bus.flush();
  assert.equal(seen.length, DEFERRED_CAPACITY + 3, 'unsubscribed: no more payloads');
});

test('a deferred listener that throws is isolated per payload; one that emits again loses nothing', () => {
  const errors: unknown[] = [];
  const bus = new EventBus<TestEvents>((error) => errors.push(error));
  const seen: number[] = [];
  bus.deferred(
    'tick',
    (e) => {
      seen.push(e.n);
      if (e.n === 1) throw new Error('boom');
      if (e.n === 2) bus.emit('tick', { n: 20, result: 'success' });
    },
    undefined,
    4,
  );
  bus.emit('tick', { n: 1, result: 'success' });
  bus.emit('tick', { n: 2, result: 'success' });
  bus.emit('tick', { n: 3, result: 'success' });
  bus.flush();
  assert.deepEqual(seen, [1, 2, 3]);
  bus.flush();
  assert.deepEqual(seen, [1, 2, 3, 20]);
  assert.equal(errors.length, 1);
});
