// What an unroutable decision means: wait (busy), 400 (too large for every node that could ever
// take it), blocked (every router that could take it is full of pinned models and nothing else
// could take it once something clears: a 503 that invites no retry), or 503 (unavailable).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyUnroutable, type Exclusion, type ExclusionCode, type UnroutableKind } from '#src/routing/index.ts';

const ex = (node: string, code: ExclusionCode): Exclusion => ({ node, filter: 'test', code });
/** Nodes that list the model (and whose context is unknown or large enough): the rest never could take it. */
const LISTING = new Set(['router', 'router-2', 'big', 'down-listing']);
const mightFit = (node: string): boolean => LISTING.has(node);

const cases: readonly { name: string; excluded: readonly Exclusion[]; want: UnroutableKind }[] = [
  { name: 'a busy node: wait', excluded: [ex('big', 'no_slot'), ex('router', 'pinned')], want: 'busy' },
  {
    name: 'a router full of pinned models, the others do not list it: blocked',
    excluded: [ex('router', 'pinned'), ex('other', 'missing'), ex('grouped', 'group_mismatch')],
    want: 'blocked',
  },
  {
    name: 'every router that lists it is full of pinned models: blocked',
    excluded: [ex('router', 'pinned'), ex('router-2', 'pinned')],
    want: 'blocked',
  },
  {
    name: 'a dead node that never listed it does not help: blocked',
    excluded: [ex('router', 'pinned'), ex('gone', 'dead')],
    want: 'blocked',
  },
  {
    name: 'a dead node that lists it may come back: unavailable (503 with Retry-After)',
    excluded: [ex('router', 'pinned'), ex('down-listing', 'dead')],
    want: 'unavailable',
  },
  {
    name: 'an asleep node that lists it could be woken: unavailable',
    excluded: [ex('router', 'pinned'), ex('down-listing', 'asleep')],
    want: 'unavailable',
  },
  {
    name: 'a load that failed on another node clears with time: unavailable',
    excluded: [ex('router', 'pinned'), ex('down-listing', 'load_failed')],
    want: 'unavailable',
  },
  {
    name: 'a pinned router that could not fit the prompt anyway is no block',
    excluded: [ex('tiny', 'pinned'), ex('other', 'missing')],
    want: 'unavailable',
  },
  {
    name: 'too small everywhere, no pins: too large',
    excluded: [ex('small', 'too_small'), ex('other', 'missing')],
    want: 'too_large',
  },
  {
    name: 'too small here, a pinned router that could fit it: blocked, not too large',
    excluded: [ex('small', 'too_small'), ex('router', 'pinned')],
    want: 'blocked',
  },
  {
    name: 'nothing lists it: unavailable (the unknown-model verdict decides 404)',
    excluded: [ex('other', 'missing'), ex('gone', 'dead')],
    want: 'unavailable',
  },
];

for (const c of cases) {
  test(`classifyUnroutable: ${c.name}`, () => {
    assert.equal(classifyUnroutable(c.excluded, mightFit), c.want);
  });
}
