import assert from 'node:assert/strict';
import { test } from 'node:test';
import { afterRound, FIRST_ROUND, idsToAsk, type RouterRound } from '#src/capacity/capacity-round.ts';
import type { ModelContext } from '#src/capacity/node-capacity.ts';

const fig = (nCtx: number): ModelContext => ({ nCtx, slots: 1 });

test('a poll asks at most max loaded ids, in id order, after the last one asked, wrapping', () => {
  const loaded = ['e', 'c', 'a', 'd', 'b'];
  const rows: [string, string | undefined, number, string[]][] = [
    ['all fit', undefined, 9, ['a', 'b', 'c', 'd', 'e']],
    ['first poll starts at the lowest id', undefined, 2, ['a', 'b']],
    ['next poll continues after the last asked', 'b', 2, ['c', 'd']],
    ['wraps around at the end', 'd', 2, ['e', 'a']],
    ['the last asked id has gone: continue after where it was', 'bb', 2, ['c', 'd']],
    ['past the highest id: start over', 'z', 2, ['a', 'b']],
  ];
  for (const [name, lastAsked, max, expected] of rows) assert.deepEqual(idsToAsk(loaded, lastAsked, max), expected, name);
});

test('taking turns asks every loaded id within ceil(loaded / max) polls', () => {
  const loaded = Array.from({ length: 10 }, (_, i) => `m${i}`);
  let round: RouterRound = FIRST_ROUND;
  const asked = new Set<string>();
  for (let poll = 0; poll < 4; poll++) {
    const ask = idsToAsk(loaded, round.lastAsked, 3);
    for (const id of ask) asked.add(id);
    round = afterRound(round, loaded, new Map(ask.map((id) => [id, fig(1)])));
  }
  assert.equal(asked.size, 10);
});

test('after a poll: asked ids take their answer, others keep their last figure, unloaded ids lose theirs', () => {
  const before: RouterRound = { lastAsked: 'a', figures: { a: fig(1), b: fig(2), gone: fig(3) } };
  const after = afterRound(
    before,
    ['a', 'b', 'c'],
    new Map([
      ['c', fig(30)],
      ['a', undefined],
    ]),
  );
  assert.deepEqual(after, { lastAsked: 'a', figures: { b: fig(2), c: fig(30) } });
  const nothingAsked = afterRound(before, ['a'], new Map());
  assert.deepEqual(nothingAsked, { lastAsked: 'a', figures: { a: fig(1) } }, 'a round cut off before any answer keeps its place');
});
