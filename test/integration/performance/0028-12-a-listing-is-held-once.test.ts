// Issue 28, lean process at 1,000 nodes × 50 models: every listing was held twice (the listing
// cache's parsed result and the registry's frozen copy of each model), every model without aliases
// had an empty array of its own, and the cache kept each answer's bytes to compare the next one
// with (~6 MB at 1,000 nodes): 75 MB of old generation in all. Now a parsed model is frozen where
// it is made, the registry stores that very object, models without aliases share one array, and
// the cache keeps a digest of the answer. Checked by identity and by what the cache holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import { ListingCache, parseModelList, type DiscoveryResult } from '#src/discovery/index.ts';
import { NodeRegistry, type RegistryEvents } from '#src/nodes/index.ts';
import type { NodeSpec } from '#src/config/types.ts';
import { spec } from '#test/fixtures/builders.ts';

const LISTING = {
  object: 'list',
  data: Array.from({ length: 50 }, (_, i) => ({ id: `model-${i}`, object: 'model', max_model_len: 8192 })),
};

function parsed(): DiscoveryResult {
  const outcome = parseModelList('vllm', JSON.parse(JSON.stringify(LISTING)));
  assert.ok(outcome.ok);
  return { ok: true, models: outcome.models };
}

test('the registry stores the parsed models themselves, not a copy, and models without aliases share one array', () => {
  const result = parsed();
  assert.ok(result.ok);
  const registry = new NodeRegistry({
    clock: new ManualClock(),
    events: new EventBus<RegistryEvents>((error) => {
      throw error;
    }),
    failThreshold: 3,
  });
  registry.setNodes([spec('a')]);
  registry.observeDiscovery('a', result);
  const stored = registry.view('a')?.discovery.models ?? [];
  assert.equal(stored.length, 50);
  assert.ok(
    stored.every((m, i) => m === result.models[i]),
    'each stored model is the parsed object (one copy per listing)',
  );
  assert.ok(Object.isFrozen(stored[0]) && Object.isFrozen(stored[0]?.aliases), 'and nobody can change it');
  assert.equal(new Set(result.models.map((m) => m.aliases)).size, 1, 'one empty aliases array for all 50 models');
  assert.notEqual(stored, result.models, "the caller's array stays the caller's");
});

test('the listing cache keeps no answer bytes: a changed buffer of the same answer still matches, any other answer misses', () => {
  const node: NodeSpec = { ...spec('a'), url: 'http://127.0.0.1:1' };
  const cache = new ListingCache();
  const answer = Buffer.from(JSON.stringify(LISTING));
  const result = parsed();
  cache.set(node, undefined, answer, result);
  const again = Buffer.from(answer);
  answer.fill(0); // the socket's buffer reused for something else: the cache must not have kept a view of it
  assert.equal(cache.get(node, undefined, again), result, 'the same answer, from a new buffer, is recognised');
  const other = Buffer.from(again);
  other[other.length - 3] = 0x20;
  assert.equal(cache.get(node, undefined, other), undefined, 'one byte changed is another answer');
});
