import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StreamTiming, tokenTimes } from '#src/proxy/attempt/stream-timing.ts';

const CASES: readonly {
  name: string;
  chunks: readonly [at: number, seen: number][];
  first: number | undefined;
  gap: number | undefined;
}[] = [
  { name: 'no chunk', chunks: [], first: undefined, gap: undefined },
  {
    name: 'chunks without generated text (role, usage)',
    chunks: [
      [5, 0],
      [9, 0],
    ],
    first: undefined,
    gap: undefined,
  },
  { name: 'one token', chunks: [[30, 1]], first: 30, gap: undefined },
  {
    name: 'a token per chunk',
    chunks: [
      [30, 1],
      [40, 2],
      [50, 3],
      [60, 4],
    ],
    first: 30,
    gap: 10,
  },
  {
    name: 'a role chunk first, then tokens',
    chunks: [
      [10, 0],
      [30, 1],
      [50, 2],
    ],
    first: 30,
    gap: 20,
  },
  {
    name: 'two tokens in the last chunk share its gap',
    chunks: [
      [30, 1],
      [60, 3],
    ],
    first: 30,
    gap: 15,
  },
  {
    name: 'several tokens in the first chunk: gaps after it only',
    chunks: [
      [30, 3],
      [40, 4],
    ],
    first: 30,
    gap: 10,
  },
  {
    name: 'a chunk that adds no token is not timed',
    chunks: [
      [30, 1],
      [35, 1],
      [50, 2],
    ],
    first: 30,
    gap: 20,
  },
];

for (const c of CASES) {
  test(`stream timing: ${c.name}`, () => {
    const timing = new StreamTiming();
    for (const [at, seen] of c.chunks) timing.passed(seen, () => at);
    assert.deepEqual(timing.times(0), { firstTokenMs: c.first, interTokenMs: c.gap });
  });
}

test('the clock is read only for chunks that add a token', () => {
  const timing = new StreamTiming();
  let reads = 0;
  const now = (): number => ++reads;
  for (const seen of [0, 0, 1, 1, 1, 2, 2]) timing.passed(seen, now);
  assert.equal(reads, 2);
});

test('the first token is timed from the request arrival', () => {
  assert.deepEqual(tokenTimes({ startedMs: 100, firstAt: 130, lastAt: 150, firstCount: 1, count: 3 }), {
    firstTokenMs: 30,
    interTokenMs: 10,
  });
});
