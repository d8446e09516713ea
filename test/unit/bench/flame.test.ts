// The flame view of a CPU profile: inclusive time counts a function once per sample (recursion
// too), stacks run root to leaf, and the folded output is what flamegraph tools read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flameOf } from '../../../bench/flame.ts';

const frame = (functionName: string) => ({ functionName, url: '', lineNumber: 0 });

// root → main → a → a (recursion) ; main → b ; plus idle.
const PROFILE = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 6] },
    { id: 2, callFrame: frame('main'), children: [3, 5] },
    { id: 3, callFrame: frame('a'), children: [4] },
    { id: 4, callFrame: frame('a') },
    { id: 5, callFrame: frame('b') },
    { id: 6, callFrame: frame('(idle)') },
  ],
  samples: [4, 4, 5, 3, 6],
  timeDeltas: [1000, 1000, 2000, 1000, 5000],
};

test('inclusive time, hottest stacks and folded stacks of a small profile', () => {
  const flame = flameOf(PROFILE);
  assert.equal(flame.busyMs, 5, 'idle is not busy');
  assert.deepEqual(
    flame.inclusive.map((f) => [f.frame, f.ms]),
    [
      ['main', 5],
      ['a', 3],
      ['b', 2],
    ],
  );
  assert.deepEqual(
    flame.stacks.map((s) => [s.frames.join(';'), s.ms]),
    [
      ['main;a;a', 2],
      ['main;b', 2],
      ['main;a', 1],
    ],
  );
  assert.deepEqual(flame.folded.split('\n').sort(), ['main;a 1000', 'main;a;a 2000', 'main;b 2000']);
  assert.equal(Math.round(flame.inclusive[0]?.share ?? 0), 100);
});
