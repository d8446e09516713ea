// The site store's read side: a site gone stale is still `remembered` (its models unavailable, not
// unknown) until REMEMBERED_MS after its last accepted record; a site never heard from is not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RemoteSiteStore } from '#src/mesh/site-store.ts';
import { modelsDigest } from '#src/mesh/record-codec.ts';
import { REMEMBERED_MS } from '#src/routing/index.ts';

const FRESH_MS = 15_000;

test('store: fresh, then stale but remembered, then forgotten; never heard of is never remembered', () => {
  const s = new RemoteSiteStore({
    ownSite: 'a',
    pins: [
      { id: 'a', publicKey: 'key-a' },
      { id: 'b', publicKey: 'key-b' },
      { id: 'c', publicKey: 'key-c' },
    ],
    digestOf: modelsDigest,
  });
  const record = {
    v: 1,
    site: 'b',
    url: 'http://127.0.0.1:9/b',
    revision: 1,
    issued_at: 0,
    models: [{ id: 'm' }],
    load: { in_flight: 0, queued: 0, slots: 1 },
  } as const;
  s.apply({ kind: 'accepted', record }, 'peer-b', 1_000);
  const at = (now: number) => s.views(now, FRESH_MS).map((v) => [v.id, v.fresh, v.remembered === true, v.models.has('m')]);
  assert.deepEqual(at(1_000), [
    ['b', true, false, true],
    ['c', false, false, false],
  ]);
  assert.deepEqual(at(1_000 + FRESH_MS + 1), [
    ['b', false, true, true],
    ['c', false, false, false],
  ]);
  assert.deepEqual(at(1_000 + REMEMBERED_MS), [
    ['b', false, true, true],
    ['c', false, false, false],
  ]);
  assert.deepEqual(at(1_000 + REMEMBERED_MS + 1), [
    ['b', false, false, true],
    ['c', false, false, false],
  ]);
});
