import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isAllowedModel, matchesGlob } from '#src/discovery/model-glob.ts';
import { allowsModel, initialDiscoveryState, restrictDiscovery, type DiscoveryState } from '#src/discovery/discovery-state.ts';
import { limitListing } from '#src/discovery/limit-listing.ts';
import { model } from '#test/fixtures/builders.ts';

test('a pattern matches with * (any run, none included) and ? (one character), everything else literally', () => {
  const rows: [string, string, boolean][] = [
    ['llama-3', 'llama-3', true],
    ['llama-3', 'llama-30', false],
    ['llama-*', 'llama-', true],
    ['llama-*', 'llama-3.1-8b', true],
    ['llama-*', 'Llama-3', false],
    ['*-instruct', 'qwen-7b-instruct', true],
    ['*-instruct', 'qwen-7b-instruct-v2', false],
    ['a*b*c', 'axxbyyc', true],
    ['a*b*c', 'axxbyy', false],
    ['a*a*a*a*b', 'a'.repeat(200), false],
    ['?', 'x', true],
    ['?', '', false],
    ['?', '😀', true],
    ['llama-?b', 'llama-7b', true],
    ['llama-?b', 'llama-70b', false],
    ['*', '', true],
    ['org/model:Q4', 'org/model:Q4', true],
    ['a.b', 'axb', false],
    ['[ab]', 'a', false],
  ];
  for (const [pattern, text, expected] of rows) assert.equal(matchesGlob(pattern, text), expected, `${pattern} ~ ${text}`);
});

test('no allow-list allows any model; a list allows what one of its patterns matches', () => {
  assert.equal(isAllowedModel(undefined, 'anything'), true);
  assert.equal(isAllowedModel(['llama-*', 'qwen'], 'qwen'), true);
  assert.equal(isAllowedModel(['llama-*', 'qwen'], 'qwen2'), false);
});

test('a listing drops ids outside the allow-list before the count limit', () => {
  const listed = ['x-1', 'llama-1', 'x-2', 'llama-2'].map((id) => model(id));
  const limited = limitListing(listed, { maxModels: 1, maxIdBytes: 64, allowed: ['llama-*'] });
  assert.deepEqual(
    limited.models.map((m) => m.id),
    ['llama-1'],
  );
  assert.deepEqual(
    limited.dropped.map((d) => [d.limit, d.count, d.sample]),
    [
      ['not_allowed', 2, ['x-1', 'x-2']],
      ['too_many_models', 1, ['llama-2']],
    ],
  );
});

test('an allow-list refuses a model on every phase, an untried node included', () => {
  const known: DiscoveryState = { ...initialDiscoveryState(0), phase: 'known', models: [model('x')] };
  for (const state of [initialDiscoveryState(0), known]) {
    assert.deepEqual(allowsModel(state, 'x', undefined, ['llama-*']), { ok: false, reason: 'not_allowed' }, state.phase);
    assert.deepEqual(allowsModel(state, 'x', undefined, undefined), { ok: true }, state.phase);
  }
  assert.deepEqual(allowsModel(initialDiscoveryState(0), 'llama-1', undefined, ['llama-*']), { ok: true });
});

test('a narrowed allow-list removes listed ids at once; a listing left with none is known_empty', () => {
  const known: DiscoveryState = { ...initialDiscoveryState(0), phase: 'known', models: [model('llama-1'), model('x')] };
  assert.deepEqual(
    restrictDiscovery(known, ['llama-*'], 5).models.map((m) => m.id),
    ['llama-1'],
  );
  assert.equal(restrictDiscovery(known, undefined, 5), known, 'no list: the same state');
  assert.equal(restrictDiscovery(known, ['*'], 5), known, 'nothing removed: the same state');
  const emptied = restrictDiscovery(known, ['other'], 5);
  assert.deepEqual([emptied.phase, emptied.models.length, emptied.changedAt], ['known_empty', 0, 5]);
});
