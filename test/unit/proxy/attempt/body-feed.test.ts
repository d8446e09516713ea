// The body feed between undici's dispatch handler and the strategy reading an answer: chunks that
// come before a reader wait (and pause the producer past a bound), a reader that stops leaves the
// rest for the next one, the end and a failure reach the reader after every queued chunk.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import type { BodyFeed, BodySink } from '#src/proxy/attempt/body-feed.ts';
import { TestFeed } from '#test/fixtures/test-feed.ts';

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
