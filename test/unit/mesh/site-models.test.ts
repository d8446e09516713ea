import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sameModels, siteModelSet } from '#src/mesh/site-models.ts';
import type { SourceModels } from '#src/mesh/discovery-source.ts';

const list = (...ids: string[]): SourceModels => ({ kind: 'list', models: ids.map((id) => ({ id })) });
const unknown: SourceModels = { kind: 'unknown', reason: 'listing failed' };

test('site set: sources merge, sorted by id, capped to the first N by id', () => {
  const cases: { name: string; answers: [string, SourceModels][]; cap: number; want: string[]; capped: number }[] = [
    {
      name: 'one source, sorted',
      answers: [['a', list('zeta', 'alpha', 'mid')]],
      cap: 10,
      want: ['alpha', 'mid', 'zeta'],
      capped: 0,
    },
    {
      name: 'two sources, one id once',
      answers: [
        ['a', list('m', 'x')],
        ['b', list('m', 'c')],
      ],
      cap: 10,
      want: ['c', 'm', 'x'],
      capped: 0,
    },
    { name: 'over the cap: the first by id', answers: [['a', list('d', 'c', 'b', 'a')]], cap: 2, want: ['a', 'b'], capped: 2 },
    { name: 'exactly the cap', answers: [['a', list('b', 'a')]], cap: 2, want: ['a', 'b'], capped: 0 },
    { name: 'cap 0 publishes nothing', answers: [['a', list('a')]], cap: 0, want: [], capped: 1 },
  ];
  for (const c of cases) {
    const set = siteModelSet(
      c.answers.map(([source, answer]) => ({ source, answer })),
      new Map(),
      c.cap,
    );
    assert.deepEqual(
      set.models.map((m) => m.id),
      c.want,
      c.name,
    );
    assert.equal(set.capped, c.capped, c.name);
  }
});

test('site set: a source answering unknown keeps its last-known-good list; a real empty list clears it', () => {
  const first = siteModelSet([{ source: 'nodes', answer: list('m1', 'm2') }], new Map(), 10);
  const bad = siteModelSet([{ source: 'nodes', answer: unknown }], first.lastGood, 10);
  assert.deepEqual(
    bad.models.map((m) => m.id),
    ['m1', 'm2'],
  );
  const empty = siteModelSet([{ source: 'nodes', answer: list() }], bad.lastGood, 10);
  assert.deepEqual(empty.models, []);
  const neverKnown = siteModelSet([{ source: 'nodes', answer: unknown }], new Map(), 10);
  assert.deepEqual(neverKnown.models, []);
});

test('site set: one model from two sources takes the larger ctx, and is on demand only if both say so', () => {
  const a: SourceModels = {
    kind: 'list',
    models: [
      { id: 'm', ctx: 4096, on_demand: true },
      { id: 'n', on_demand: true },
    ],
  };
  const b: SourceModels = {
    kind: 'list',
    models: [
      { id: 'm', ctx: 8192 },
      { id: 'n', on_demand: true },
    ],
  };
  const set = siteModelSet(
    [
      { source: 'a', answer: a },
      { source: 'b', answer: b },
    ],
    new Map(),
    10,
  );
  assert.deepEqual(set.models, [
    { id: 'm', ctx: 8192 },
    { id: 'n', on_demand: true },
  ]);
});

test('sameModels compares ids, contexts and on-demand flags in order', () => {
  assert.equal(sameModels([{ id: 'a', ctx: 1 }], [{ id: 'a', ctx: 1, on_demand: false }]), true);
  assert.equal(sameModels([{ id: 'a', ctx: 1 }], [{ id: 'a', ctx: 2 }]), false);
  assert.equal(sameModels([{ id: 'a' }], [{ id: 'a', on_demand: true }]), false);
  assert.equal(sameModels([{ id: 'a' }], [{ id: 'a' }, { id: 'b' }]), false);
});
