// Issue 20, item 5: replay was judged only against the revision held in memory and issued_at was
// never checked for age. A peer sent {"want":"b"}, captured b's records, waited for b to die and a
// to restart, then replayed them: a listed b's models as fresh and forwarded to a dead site. Now a
// record older than freshness + max_clock_skew by the receiver's clock is refused (stale_record),
// the highest accepted revision per site survives a restart in the state file beside the key, and
// a want from a peer that is neither a pinned site nor an admitted peer is ignored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeWant } from '#src/mesh/record-codec.ts';
import { revisionStateFile } from '#src/mesh/revision-state-file.ts';
import { HEARTBEAT_MS, MeshHarness, isFreshAt, modelIds, named, settle } from '#test/unit/mesh/mesh-harness.ts';

const M = (...ids: string[]) => ids.map((id) => ({ id }));

/** What the rogue captures: any signed record naming `site`, by its content. */
function isRecordOf(data: Uint8Array, site: string): boolean {
  try {
    const parsed = JSON.parse(new TextDecoder().decode(data)) as { record?: { site?: unknown } };
    return parsed.record?.site === site;
  } catch {
    return false;
  }
}

/** Sites a and b, and the rogue (admitted by both, as a relay would be) recording every record of b. */
async function captured(h: MeshHarness, stateFile: string | undefined): Promise<Uint8Array[]> {
  const revisions = stateFile === undefined ? {} : { revisions: revisionStateFile(stateFile) };
  await h.start('a', [], {}, revisions);
  const b = await h.start('b', M('b1'));
  const recorded: Uint8Array[] = [];
  const rogue = h.rogue();
  rogue.onMessage((data) => {
    if (isRecordOf(data, 'b')) recorded.push(data);
    return 'accept';
  });
  await rogue.start();
  await h.advance(3 * HEARTBEAT_MS);
  assert.ok(isFreshAt(h.site('a'), 'b'), 'a learned b');
  assert.ok(recorded.length >= 2, 'the rogue captured full records and heartbeats of b');
  // b dies; a restarts (same key, same state file).
  await b.service.stop();
  await h.site('a').service.stop();
  await h.start('a', [], {}, revisions);
  // The rogue replays everything it captured, in order.
  for (const data of recorded) await rogue.publish(data);
  await settle();
  return recorded;
}

test('replayed records of a dead site after the receiver restarts are replays (the state file holds the revision)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sy-0020-05-'));
  const h = new MeshHarness(['a', 'b']);
  try {
    await captured(h, join(dir, 'site.key.state.json'));
    const a = h.site('a');
    assert.equal(isFreshAt(a, 'b'), false, 'b is not fresh at a after the replay');
    assert.deepEqual(modelIds(a, 'b'), [], "a does not list b's models");
    assert.ok(named(a, 'mesh:record-rejected').some((r) => r.reason === 'replay'));
  } finally {
    await h.stopAll();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a record older than freshness + max_clock_skew is refused as stale_record, even at a receiver that holds nothing', async () => {
  const h = new MeshHarness(['a', 'b']);
  try {
    // No state file at all: a restarts knowing nothing; the replay comes well after capture.
    await h.start('a');
    const b = await h.start('b', M('b1'));
    const recorded: Uint8Array[] = [];
    const rogue = h.rogue();
    rogue.onMessage((data) => {
      if (isRecordOf(data, 'b')) recorded.push(data);
      return 'accept';
    });
    await rogue.start();
    await h.advance(2 * HEARTBEAT_MS);
    await b.service.stop();
    await h.site('a').service.stop();
    const a = await h.start('a');
    h.clock.advance(3_000 + 30_000 + 1_000); // freshness 3 s + max_clock_skew 30 s, and then some
    for (const data of recorded) await rogue.publish(data);
    await settle();
    assert.equal(isFreshAt(a, 'b'), false);
    assert.deepEqual(modelIds(a, 'b'), []);
    assert.ok(recorded.length > 0);
    assert.ok(
      named(a, 'mesh:record-rejected').some((r) => r.reason === 'stale_record'),
      JSON.stringify(named(a, 'mesh:record-rejected').map((r) => r.reason)),
    );
  } finally {
    await h.stopAll();
  }
});

test('a want from a peer that is no pinned site and not admitted is ignored, though an admitted relay passed it on', async () => {
  const h = new MeshHarness(['b']);
  try {
    const b = await h.start('b', M('b1'));
    const relay = h.rogue(); // admitted by b (allowed_peers); relays whatever it hears
    relay.onMessage(() => 'accept');
    await relay.start();
    const stranger = h.bus.transport('stranger', 'stranger-peer-id');
    stranger.onMessage(() => 'accept');
    await stranger.start();
    h.bus.link(['peer-b', 'peer-rogue'], ['stranger', 'peer-rogue']);
    await h.advance(2 * HEARTBEAT_MS);
    b.events.length = 0;
    await stranger.publish(encodeWant('b'));
    await settle();
    assert.deepEqual(
      named(b, 'mesh:published').filter((p) => p.why === 'want'),
      [],
      'b did not publish its full record for the stranger',
    );
    assert.deepEqual(named(b, 'mesh:want-ignored'), [{ peer: 'stranger-peer-id' }]);
  } finally {
    await h.stopAll();
  }
});
