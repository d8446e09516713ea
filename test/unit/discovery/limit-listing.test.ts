import assert from 'node:assert/strict';
import { test } from 'node:test';
import { changedDrops, limitListing, type ListingDrop, type ListingRules } from '#src/discovery/limit-listing.ts';
import { cutTo, sampleIds } from '#src/discovery/id-sample.ts';
import { model } from '#test/fixtures/builders.ts';

const RULES: ListingRules = { maxModels: 3, maxIdBytes: 8 };
const ids = (models: readonly { id: string }[]): string[] => models.map((m) => m.id);

test('a listing is bounded by id length, then by count, keeping listing order', () => {
  const rows: { name: string; listing: ReturnType<typeof model>[]; kept: string[]; dropped: [string, number][] }[] = [
    { name: 'within every limit', listing: [model('b'), model('a')], kept: ['b', 'a'], dropped: [] },
    {
      name: 'long ids dropped',
      listing: [model('a'), model('x'.repeat(9)), model('b')],
      kept: ['a', 'b'],
      dropped: [['id_too_long', 1]],
    },
    {
      name: 'length counts UTF-8 bytes',
      listing: [model('ééééé'), model('éééé')],
      kept: ['éééé'],
      dropped: [['id_too_long', 1]],
    },
    {
      name: 'past the count, the lowest ids are kept, in listing order',
      listing: [model('d'), model('b'), model('a'), model('c')],
      kept: ['b', 'a', 'c'],
      dropped: [['too_many_models', 1]],
    },
    {
      name: 'past the count, loaded entries win over unloaded ones',
      listing: [model('a', { loaded: false }), model('b', { loaded: false }), model('y'), model('z')],
      kept: ['a', 'y', 'z'],
      dropped: [['too_many_models', 1]],
    },
    {
      name: 'both limits, long ids never count towards the kept ones',
      listing: [model('x'.repeat(20)), model('a'), model('b'), model('c'), model('d')],
      kept: ['a', 'b', 'c'],
      dropped: [
        ['id_too_long', 1],
        ['too_many_models', 1],
      ],
    },
  ];
  for (const row of rows) {
    const limited = limitListing(row.listing, RULES);
    assert.deepEqual(ids(limited.models), row.kept, row.name);
    assert.deepEqual(
      limited.dropped.map((d) => [d.limit, d.count]),
      row.dropped,
      row.name,
    );
  }
});

test('a reordered listing keeps the same set past the count limit', () => {
  const forward = limitListing(
    ['e', 'd', 'c', 'b', 'a'].map((id) => model(id)),
    RULES,
  );
  const backward = limitListing(
    ['a', 'b', 'c', 'd', 'e'].map((id) => model(id)),
    RULES,
  );
  assert.deepEqual(new Set(ids(forward.models)), new Set(ids(backward.models)));
});

test('aliases past the id length are dropped with no count of their own', () => {
  const limited = limitListing([model('a', { aliases: ['short', 'x'.repeat(9)] })], RULES);
  assert.deepEqual(limited.models[0]?.aliases, ['short']);
  assert.deepEqual(limited.dropped, []);
});

test('a drop names at most ten ids, each cut short', () => {
  const listing = Array.from({ length: 50 }, (_, i) => model(`${'x'.repeat(100)}${i}`));
  const [drop] = limitListing(listing, { maxModels: 10, maxIdBytes: 64 }).dropped;
  assert.equal(drop?.count, 50);
  assert.equal(drop?.sample.length, 10);
  for (const id of drop?.sample ?? []) assert.ok(id.length <= 64, id);
});

test('a drop is worth a log line only when its limit newly applies or its count changes', () => {
  const drop = (limit: ListingDrop['limit'], count: number): ListingDrop => ({ limit, count, sample: [] });
  const same = [drop('too_many_models', 5)];
  const rows: [string, ListingDrop[], ListingDrop[], string[]][] = [
    ['nothing dropped', [], [], []],
    ['the same array (a failed poll)', same, same, []],
    ['unchanged count on the next poll', [drop('too_many_models', 5)], [drop('too_many_models', 5)], []],
    ['newly applies', [], [drop('id_too_long', 1)], ['id_too_long']],
    ['count changed', [drop('too_many_models', 5)], [drop('too_many_models', 6)], ['too_many_models']],
    [
      'one of two changed',
      [drop('id_too_long', 1), drop('too_many_models', 5)],
      [drop('id_too_long', 2), drop('too_many_models', 5)],
      ['id_too_long'],
    ],
    ['no longer applies', [drop('too_many_models', 5)], [], []],
  ];
  for (const [name, prev, next, expected] of rows)
    assert.deepEqual(
      changedDrops(prev, next).map((d) => d.limit),
      expected,
      name,
    );
});

test('sampled ids are cut without splitting a surrogate pair', () => {
  assert.deepEqual(sampleIds(['a', 'b', 'c'], 2), ['a', 'b']);
  assert.equal(cutTo('abcdef', 4), 'abc…');
  assert.equal(cutTo('ab😀cd', 4), 'ab…');
  assert.equal(cutTo('abc', 4), 'abc');
});
