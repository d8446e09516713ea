// The small pure pieces behind gossip judging (issue 20, items 4 to 6): the verdict a judgement
// earns, the per-peer message bound, the bounded rejection log, and the revision state's format.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RECORD_REJECTIONS, type RecordRejection } from '#src/mesh/judgement.ts';
import { verdictOf, worstVerdict } from '#src/mesh/verdict.ts';
import { PeerRate } from '#src/mesh/peer-rate.ts';
import { REJECTION_LINES_PER_WINDOW, REJECTION_WINDOW_MS, RejectionLog } from '#src/mesh/rejection-log.ts';
import { applicableRevisions, parseRevisionState, serializeRevisionState } from '#src/mesh/revision-state.ts';
import { revisionStateFile, stateFileFor } from '#src/mesh/revision-state-file.ts';
import { addressPeerId, sitePeerId } from '#src/mesh/site-peer-id.ts';
import { newSiteKey } from '#src/mesh/site-key-file.ts';

const VERDICTS: Readonly<Record<RecordRejection, 'reject' | 'ignore'>> = {
  malformed: 'reject',
  oversized: 'reject',
  not_pinned: 'reject',
  bad_signature: 'reject',
  url_mismatch: 'reject',
  over_cap: 'reject',
  replay: 'ignore',
  unknown_digest: 'ignore',
  stale_record: 'ignore',
  future: 'ignore',
};

for (const reason of RECORD_REJECTIONS) {
  test(`verdict: ${reason} is ${VERDICTS[reason]}ed`, () => {
    assert.equal(verdictOf({ kind: 'rejected', reason, site: 'b', detail: '' }), VERDICTS[reason]);
  });
}

test('verdict: an accepted record is relayed; several judges: the worst wins, none ignores', () => {
  assert.equal(
    verdictOf({
      kind: 'accepted',
      record: {
        v: 1,
        site: 'b',
        url: 'http://x',
        revision: 1,
        issued_at: 0,
        models: [],
        load: { in_flight: 0, queued: 0, slots: 0 },
      },
    }),
    'accept',
  );
  assert.equal(worstVerdict(['accept', 'ignore', 'reject']), 'reject');
  assert.equal(worstVerdict(['accept', 'ignore']), 'ignore');
  assert.equal(worstVerdict(['accept']), 'accept');
  assert.equal(worstVerdict([]), 'ignore');
});

test('peer rate: at most the limit per peer per one-second window, peers apart', () => {
  const rate = new PeerRate(3);
  const taken = (peer: string, at: number) => rate.take(peer, at);
  assert.deepEqual(
    [0, 10, 20, 30, 999].map((t) => taken('p', t)),
    [true, true, true, false, false],
  );
  assert.equal(taken('q', 500), true, 'another peer has its own window');
  assert.equal(taken('p', 1_000), true, 'a new window');
  rate.setLimit(1);
  assert.deepEqual(
    [2_000, 2_001].map((t) => taken('p', t)),
    [true, false],
  );
  rate.forget('p');
  assert.equal(taken('p', 2_002), true);
});

test('peer rate: past the bound a message is ignored; past twice the bound, rejected (the peer is flooding)', () => {
  const rate = new PeerRate(2);
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5].map((t) => rate.verdict('p', t)),
    ['judge', 'judge', 'ignore', 'ignore', 'reject', 'reject'],
  );
  assert.equal(rate.verdict('p', 1_000), 'judge', 'a new window forgives');
});

test('peer rate: memory stays bounded under a flood of peer ids', () => {
  const rate = new PeerRate(1);
  for (let i = 0; i < 20_000; i += 1) rate.take(`peer-${i}`, 0);
  // No public size; a new peer is still admitted, and an old one was dropped (admitted again).
  assert.equal(rate.take('peer-0', 1), true);
});

test('rejection log: a line once per (peer, reason), at most N per reason a window, the held-back count on the next', () => {
  const log = new RejectionLog();
  assert.deepEqual(log.note('p1', 'replay', 0), { log: true, suppressed: 0 });
  assert.deepEqual(log.note('p1', 'replay', 1), { log: false, suppressed: 0 }, 'the same pair again');
  const lines = Array.from({ length: 20 }, (_, i) => log.note(`q${i}`, 'bad_signature', 10));
  assert.equal(lines.filter((n) => n.log).length, REJECTION_LINES_PER_WINDOW);
  assert.deepEqual(log.note('late', 'bad_signature', 10 + REJECTION_WINDOW_MS), {
    log: true,
    suppressed: 20 - REJECTION_LINES_PER_WINDOW,
  });
  assert.deepEqual(log.note('other', 'replay', 20), { log: true, suppressed: 0 }, 'reasons are limited apart');
});

test('rejection log: the (peer, reason) memory is an LRU of bounded size', () => {
  const log = new RejectionLog();
  for (let i = 0; i < 50_000; i += 1) log.note(`author-${i}`, 'bad_signature', i);
  assert.ok(log.size() <= 1_024, `${log.size()} pairs held`);
});

test('revision state: round trip, and every bad file names its problem', () => {
  const held = new Map([
    ['b', { key: 'kb', revision: 7 }],
    ['a', { key: 'ka', revision: 3 }],
  ]);
  const text = serializeRevisionState(held);
  assert.equal(text, '{"v":1,"sites":{"a":{"key":"ka","revision":3},"b":{"key":"kb","revision":7}}}\n');
  const parsed = parseRevisionState(text);
  assert.ok(parsed.ok);
  assert.deepEqual(
    [...parsed.revisions],
    [
      ['a', { key: 'ka', revision: 3 }],
      ['b', { key: 'kb', revision: 7 }],
    ],
  );
  const bad: readonly [string, RegExp][] = [
    ['', /not JSON/],
    ['{"v":2,"sites":{}}', /^v: /],
    ['{"v":1,"sites":{"b":{"key":"k","revision":-1}}}', /^sites\.b\.revision: /],
    ['{"v":1,"sites":{"b":{"key":"k","revision":1.5}}}', /^sites\.b\.revision: /],
    ['[]', /the file/],
  ];
  for (const [input, problem] of bad) {
    const result = parseRevisionState(input);
    assert.ok(!result.ok && problem.test(result.problem), `${input}: ${result.ok ? 'parsed' : result.problem}`);
  }
});

test('revision state: only revisions held under the key pinned now apply', () => {
  const held = new Map([
    ['b', { key: 'kb', revision: 7 }],
    ['c', { key: 'old', revision: 9 }],
    ['gone', { key: 'kg', revision: 1 }],
  ]);
  const pins = [
    { id: 'b', publicKey: 'kb' },
    { id: 'c', publicKey: 'new' },
  ];
  assert.deepEqual([...applicableRevisions(held, pins)], [['b', 7]]);
});

test('revision state file: beside the key, written atomically (no temp file left), a bad one reported as empty', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sy-state-'));
  try {
    const path = stateFileFor(join(dir, 'site.key'));
    assert.equal(path, join(dir, 'site.key.state.json'));
    const store = revisionStateFile(path);
    assert.deepEqual(await store.read(), { revisions: new Map() }, 'no file yet: empty, no problem');
    await store.write(new Map([['b', { key: 'kb', revision: 5 }]]));
    assert.deepEqual(await readdir(dir), ['site.key.state.json']);
    assert.deepEqual([...(await store.read()).revisions], [['b', { key: 'kb', revision: 5 }]]);
    await writeFile(path, '{"v":1,"sites":');
    const broken = await store.read();
    assert.deepEqual([...broken.revisions], []);
    assert.match(broken.problem ?? '', /mesh state file .*site\.key\.state\.json: not JSON/);
    await store.write(new Map());
    assert.equal(await readFile(path, 'utf8'), '{"v":1,"sites":{}}\n', 'the next write replaces a bad file');
    await assert.rejects(
      revisionStateFile(join(dir, 'missing-dir', 'x.json')).write(new Map()),
      /mesh state file .*cannot write it/,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('site peer ids: a pinned key is its peer id; a bootstrap address names one', () => {
  const key = newSiteKey();
  assert.equal(sitePeerId(key.publicKey), key.peerId);
  assert.equal(addressPeerId(`/ip4/127.0.0.1/tcp/1/p2p/${key.peerId}`), key.peerId);
  assert.equal(addressPeerId('/ip4/127.0.0.1/tcp/1'), undefined);
});
