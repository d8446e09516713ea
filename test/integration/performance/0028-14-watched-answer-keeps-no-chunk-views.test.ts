// Issue 28, ten thousand streams (memory per stream): the reader of an answer that passes untouched
// (usage-watch.ts: a stream whose client asked for usage itself, a JSON answer) kept its first and
// last 4 KiB as the chunks themselves. A chunk is a view of the socket read it came in, so each kept
// chunk held its whole read — a relay that fell behind reads up to 64 KiB at once — for the rest of
// the stream. It now copies the bytes it keeps (kept-tail.ts). Checked by whether the chunks'
// memory can be collected while the watch lives (WeakRef + a forced GC), not by a timing or an RSS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { UsageWatch } from '#src/proxy/attempt/usage-watch.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** One SSE event as a 300-byte view of its own 64 KiB "socket read". */
function eventInBigRead(index: number, refs: WeakRef<ArrayBuffer>[]): Buffer {
  const text = `data: {"choices":[{"index":0,"delta":{"content":"t${index}"}}]}\n\n`;
  const read = Buffer.alloc(64 * 1024);
  const length = read.write(text.padEnd(300, ' '), 0, 'latin1');
  refs.push(new WeakRef(read.buffer));
  return read.subarray(0, length);
}

test('a watched stream keeps copies of its first and last bytes, not the reads its chunks came in', async () => {
  const refs: WeakRef<ArrayBuffer>[] = [];
  const watch = new UsageWatch('sse');
  for (let i = 0; i < 40; i += 1) watch.pass(eventInBigRead(i, refs));
  for (let i = 0; i < 3; i += 1) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
  const alive = refs.filter((ref) => ref.deref() !== undefined).length;
  assert.equal(alive, 0, `${alive} of the 40 reads (64 KiB each) are still held by the watch`);
  // And it still reads what it kept: 40 content events seen, no usage stated.
  assert.equal(watch.seenTokens(), 40);
  assert.ok(watch.usage('cut') === undefined || typeof watch.usage('cut') === 'object');
});
