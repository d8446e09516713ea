import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SiteRecord } from '#src/mesh/site-record.ts';
import { modelsDigest, signRecord } from '#src/mesh/record-codec.ts';
import { FRESHNESS_MS, HEARTBEAT_MS, isFreshAt, MeshHarness, meshConfig, modelIds, named, settle } from './mesh-harness.ts';

const M = (...ids: string[]) => ids.map((id) => ({ id, ctx: 4096 }));

test('mesh service: sites learn each other at start; heartbeats are digests that keep them fresh', async () => {
  const h = new MeshHarness(['a', 'b', 'c']);
  const a = await h.start('a', M('a1'));
  const b = await h.start('b', M('b1', 'b2'));
  const c = await h.start('c', M('c1'));
  // Each start is a full record, and each join makes the others publish theirs in full.
  assert.deepEqual(modelIds(a, 'b'), ['b1', 'b2']);
  assert.deepEqual(modelIds(a, 'c'), ['c1']);
  assert.deepEqual(modelIds(c, 'a'), ['a1']);
  assert.equal(isFreshAt(b, 'c'), true);
  a.events.length = 0;
  await h.advance(10 * HEARTBEAT_MS);
  const kinds = named(a, 'mesh:published').map((p) => p.kind);
  assert.deepEqual(new Set(kinds), new Set(['digest']));
  assert.ok(kinds.length >= 9 && kinds.length <= 11, `one digest per heartbeat, got ${kinds.length}`);
  assert.equal(isFreshAt(a, 'b'), true);
  assert.equal(isFreshAt(a, 'c'), true);
  assert.deepEqual(named(a, 'mesh:record-rejected'), []);
  await h.stopAll();
});

test('mesh service: a changed set is published in full at once; a site that stops goes stale within the window, logged once', async () => {
  const h = new MeshHarness(['a', 'c']);
  const a = await h.start('a');
  const c = await h.start('c', M('c1'));
  c.models = M('c1', 'new');
  c.service.modelsMayHaveChanged();
  await settle();
  assert.deepEqual(modelIds(a, 'c'), ['c1', 'new']);
  c.models = M('new');
  await h.advance(HEARTBEAT_MS);
  assert.deepEqual(modelIds(a, 'c'), ['new'], 'a removal is seen by the next heartbeat at the latest');
  await c.service.stop();
  await h.advance(FRESHNESS_MS);
  assert.equal(isFreshAt(a, 'c'), true, 'still fresh within the window');
  await h.advance(2 * HEARTBEAT_MS);
  assert.equal(isFreshAt(a, 'c'), false);
  assert.deepEqual(named(a, 'mesh:site-freshness'), [
    { site: 'c', fresh: true },
    { site: 'c', fresh: false },
  ]);
  await h.stopAll();
});

test('mesh service: a source answering unknown keeps the published set', async () => {
  const h = new MeshHarness(['a', 'c']);
  const a = await h.start('a');
  const c = await h.start('c', M('c1'));
  c.listing = false;
  await h.advance(3 * HEARTBEAT_MS);
  assert.deepEqual(modelIds(a, 'c'), ['c1']);
  assert.deepEqual(named(c, 'mesh:published').filter((p) => p.kind === 'full').length, 1, 'the start only');
  await h.stopAll();
});

test('mesh service: partition and heal converge without a pull protocol', async () => {
  const h = new MeshHarness(['a', 'b', 'c']);
  const a = await h.start('a');
  await h.start('b', M('b1'));
  const c = await h.start('c', M('c1'));
  h.bus.partition(['peer-c']);
  c.models = M('c1', 'c2');
  await h.advance(FRESHNESS_MS + 2 * HEARTBEAT_MS);
  assert.equal(isFreshAt(a, 'c'), false, 'partitioned away: stale');
  assert.equal(isFreshAt(c, 'a'), false);
  assert.deepEqual(modelIds(a, 'c'), ['c1'], 'last accepted set kept while stale');
  h.bus.heal();
  await h.advance(HEARTBEAT_MS);
  assert.equal(isFreshAt(a, 'c'), true);
  assert.deepEqual(modelIds(a, 'c'), ['c1', 'c2']);
  assert.equal(isFreshAt(c, 'b'), true);
  await h.stopAll();
});

test('mesh service: a heartbeat whose digest is unknown makes the receiver want the full record, and the owner sends it', async () => {
  const h = new MeshHarness(['a', 'b']);
  const b = await h.start('b', M('b1'));
  const a = await h.start('a');
  assert.deepEqual(modelIds(a, 'b'), ['b1'], 'the join made b publish in full');
  // a loses b's list (b unpinned, then pinned again by reload): b's next heartbeat names a digest a lacks.
  a.service.reconfigure(meshConfig('a', [{ id: 'a', publicKey: h.keys.get('a')?.publicKey ?? '' }]));
  a.service.reconfigure(meshConfig('a', h.pins()));
  assert.deepEqual(modelIds(a, 'b'), []);
  b.events.length = 0;
  await h.advance(HEARTBEAT_MS);
  assert.deepEqual(
    named(a, 'mesh:record-rejected').map((r) => r.reason),
    ['unknown_digest'],
  );
  assert.deepEqual(named(a, 'mesh:want-sent'), [{ site: 'b' }]);
  assert.deepEqual(
    named(b, 'mesh:published').map((p) => `${p.kind}:${p.why}`),
    ['digest:heartbeat', 'full:want'],
  );
  assert.deepEqual(modelIds(a, 'b'), ['b1']);
  await h.stopAll();
});

test('mesh service: forged, replayed, over-cap and future records are rejected by every site and change nothing', async () => {
  const h = new MeshHarness(['a', 'b', 'c']);
  const a = await h.start('a');
  const b = await h.start('b', M('b1'));
  const c = await h.start('c', M('c1'));
  const rogue = h.rogue();
  await rogue.start();
  await settle();
  const before = (site: typeof a) => JSON.stringify(site.service.sites().map((s) => ({ ...s, models: [...s.models] })));
  const snapshotA = before(a);
  const now = h.clock.now();
  const base: SiteRecord = {
    v: 1,
    site: 'c',
    url: 'http://127.0.0.1:1/evil',
    revision: now * 1024 * 4,
    issued_at: now,
    models: M('evil'),
    load: { in_flight: 0, queued: 0, slots: 1 },
  };
  // b's key speaking for c.
  await rogue.publish(signRecord(base, h.keys.get('b') ?? assert.fail()));
  // c's own key, but a revision below the highest accepted: a replay.
  await rogue.publish(signRecord({ ...base, revision: 1 }, h.keys.get('c') ?? assert.fail()));
  // c's key, over the cap of 8 models.
  await rogue.publish(
    signRecord({ ...base, models: M(...Array.from({ length: 9 }, (_, i) => `m${i}`)) }, h.keys.get('c') ?? assert.fail()),
  );
  // c's key, issued further in the future than max_clock_skew.
  await rogue.publish(signRecord({ ...base, issued_at: now + 60_000 }, h.keys.get('c') ?? assert.fail()));
  // Not pinned at all, and garbage.
  await rogue.publish(signRecord({ ...base, site: 'zz' }, h.keys.get('b') ?? assert.fail()));
  await rogue.publish(new TextEncoder().encode('{"record": 1'));
  await settle();
  for (const site of [a, b]) {
    assert.deepEqual(
      named(site, 'mesh:record-rejected').map((r) => r.reason),
      ['bad_signature', 'replay', 'over_cap', 'future', 'not_pinned', 'malformed'],
    );
  }
  assert.equal(before(a), snapshotA);
  assert.deepEqual(modelIds(a, 'c'), ['c1']);
  assert.equal(a.service.adminRows().find((r) => r.id === 'c')?.last_rejection?.reason, 'future');
  // A recorded genuine message replayed later is ignored too.
  const recorded: Uint8Array[] = [];
  rogue.onMessage((data, from) => {
    if (from === c.key.peerId) recorded.push(data);
    return 'accept';
  });
  await h.advance(HEARTBEAT_MS);
  c.models = M('c1', 'c2');
  await h.advance(HEARTBEAT_MS);
  const old = recorded[0] ?? assert.fail('nothing recorded');
  await rogue.publish(old);
  await settle();
  assert.equal(named(a, 'mesh:record-rejected').at(-1)?.reason, 'replay');
  assert.deepEqual(modelIds(a, 'c'), ['c1', 'c2']);
  await rogue.stop();
  await h.stopAll();
});

test('mesh service: over its own cap a site publishes the first N by id, and reports the episode once', async () => {
  const h = new MeshHarness(['a', 'b', 'c']);
  const a = await h.start('a');
  const c = await h.start('c', M('e', 'd', 'c', 'b', 'a'), { maxModelsPerSite: 3 });
  assert.deepEqual(modelIds(a, 'c'), ['a', 'b', 'c']);
  await h.start('b');
  c.models = M('a');
  c.service.modelsMayHaveChanged();
  c.models = M('f', 'e', 'd', 'c', 'b', 'a');
  c.service.modelsMayHaveChanged();
  await settle();
  const fulls = named(c, 'mesh:published')
    .filter((p) => p.kind === 'full')
    .map((p) => `${p.why}:${p.models}`);
  assert.deepEqual(fulls, ['start:3', 'peer_joined:3', 'changed:1', 'changed:3']);
  assert.deepEqual(named(c, 'mesh:models-capped'), [
    { total: 5, cap: 3, firstInEpisode: true },
    { total: 5, cap: 3, firstInEpisode: false },
    { total: 6, cap: 3, firstInEpisode: true },
  ]);
  assert.deepEqual(
    c.service.ownRow().models.map((m) => m.id),
    ['a', 'b', 'c'],
  );
  await h.stopAll();
});

test('mesh service: reload keeps learned state, forgets unpinned sites, applies the new heartbeat and peers', async () => {
  const h = new MeshHarness(['a', 'b', 'c']);
  const a = await h.start('a');
  await h.start('b', M('b1'));
  await h.start('c', M('c1'));
  const pins = h.pins().filter((p) => p.id !== 'c');
  a.service.reconfigure(meshConfig('a', pins, { heartbeatMs: 2 * HEARTBEAT_MS, peers: ['/ip4/127.0.0.1/tcp/1/p2p/x'] }));
  assert.deepEqual(
    a.service.sites().map((s) => s.id),
    ['b'],
  );
  assert.deepEqual(modelIds(a, 'b'), ['b1']);
  assert.deepEqual(a.transport.peers, ['/ip4/127.0.0.1/tcp/1/p2p/x']);
  a.events.length = 0;
  await h.advance(4 * HEARTBEAT_MS);
  assert.equal(named(a, 'mesh:published').length, 2, 'one digest per new heartbeat');
  assert.ok(named(a, 'mesh:record-rejected').every((r) => r.reason === 'not_pinned' && r.site === 'c'));
  assert.equal(a.service.adminRows().length, 1);
  await h.stopAll();
});

test('mesh service: every publication carries a higher revision, and a digest is smaller than the full record', async () => {
  const h = new MeshHarness(['a', 'b']);
  const a = await h.start('a', M(...Array.from({ length: 8 }, (_, i) => `model-with-a-long-name-${i}`)));
  await h.start('b');
  await h.advance(3 * HEARTBEAT_MS);
  const published = named(a, 'mesh:published');
  const revisions = published.map((p) => p.revision);
  assert.deepEqual(
    revisions,
    [...revisions].sort((x, y) => x - y),
  );
  assert.equal(new Set(revisions).size, revisions.length);
  const full = published.find((p) => p.kind === 'full')?.bytes ?? 0;
  const digest = published.find((p) => p.kind === 'digest')?.bytes ?? Infinity;
  assert.ok(digest < full, `digest ${digest} B vs full ${full} B`);
  assert.equal(modelsDigest([]).length, 43);
  await h.stopAll();
});

test("mesh service: a receiver that cannot hold a site's full record (over its cap) backs off its wants", async () => {
  const h = new MeshHarness(['a', 'b']);
  const a = await h.start('a', M(...Array.from({ length: 6 }, (_, i) => `m${i}`)), { maxModelsPerSite: 6 });
  const b = await h.start('b', [], { maxModelsPerSite: 4 });
  await h.advance(40 * HEARTBEAT_MS, 500);
  const wants = named(b, 'mesh:want-sent').length;
  assert.ok(wants >= 3 && wants <= 7, `wants back off: ${wants} in 40 heartbeats`);
  const fulls = named(a, 'mesh:published').filter((p) => p.kind === 'full').length;
  assert.ok(fulls <= wants + 2, `full records ${fulls}`);
  assert.equal(named(b, 'mesh:record-rejected').filter((r) => r.reason === 'over_cap').length >= 1, true);
  await h.stopAll();
});

test('mesh service: a record that cannot be signed or is over max_message_bytes is reported, never thrown', async () => {
  const h = new MeshHarness(['a', 'b']);
  const a = await h.start('a', M(...Array.from({ length: 8 }, (_, i) => `m${i}`)), { maxMessageBytes: 300 });
  await h.advance(2 * HEARTBEAT_MS);
  const failed = named(a, 'mesh:publish-failed');
  assert.ok(
    failed.some((f) => f.kind === 'full' && /over max_message_bytes 300/.test(f.error)),
    JSON.stringify(failed),
  );
  assert.equal(a.service.ownRow().revision, undefined, 'nothing published yet');
  await h.stopAll();
});

test('mesh service: a bad state file is reported and read as empty; the site starts and writes a good one', async () => {
  const { mkdtemp, readFile, rm, writeFile } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { revisionStateFile } = await import('#src/mesh/revision-state-file.ts');
  const dir = await mkdtemp(join(tmpdir(), 'sy-state-'));
  const path = join(dir, 'a.key.state.json');
  await writeFile(path, 'not json at all');
  const h = new MeshHarness(['a', 'b']);
  try {
    const a = await h.start('a', [], {}, { revisions: revisionStateFile(path) });
    await h.start('b', M('b1'));
    assert.match(
      named(a, 'mesh:state-failed')[0]?.problem ?? '',
      /a\.key\.state\.json: not JSON; starting with no held revisions/,
    );
    await h.advance(3 * HEARTBEAT_MS);
    assert.deepEqual(modelIds(a, 'b'), ['b1']);
    await a.service.stop();
    const written = JSON.parse(await readFile(path, 'utf8')) as { sites: Record<string, { revision: number }> };
    assert.ok((written.sites['b']?.revision ?? 0) > 0, 'the highest revision of b was written at stop');
  } finally {
    await h.stopAll();
    await rm(dir, { recursive: true, force: true });
  }
});
