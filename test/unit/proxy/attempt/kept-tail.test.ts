// The kept end of an answer: always exactly the last `size` bytes that passed, whatever the chunk
// sizes (one byte, just under, exactly, over the size; many small ones that wrap the buffer).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { KeptTail } from '#src/proxy/attempt/kept-tail.ts';

test('the last `size` bytes, for every mix of chunk sizes', () => {
  const size = 16;
  const cases: number[][] = [
    [],
    [1],
    [15],
    [16],
    [17],
    [40],
    [1, 1, 1],
    [5, 5, 5, 5, 5, 5, 5, 5],
    [15, 2, 15, 2],
    [3, 30, 3],
    [16, 16, 1],
    Array.from({ length: 200 }, (_, i) => (i % 7) + 1),
  ];
  for (const sizes of cases) {
    const kept = new KeptTail(size);
    let all = Buffer.alloc(0);
    let next = 0;
    for (const n of sizes) {
      const chunk = Buffer.from(Array.from({ length: n }, () => next++ % 251));
      kept.push(chunk);
      all = Buffer.concat([all, chunk]);
      assert.deepEqual(kept.bytes(), all.subarray(Math.max(0, all.length - size)), `after ${JSON.stringify(sizes)}`);
    }
  }
});
