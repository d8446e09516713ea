// The replay keeper's shell (mesh/forwarding/replay-keeper.ts) over a fake record store: the
// running record is written before the memory opens; a record it cannot write falls back to the
// blackout, and a stale stopped record it can neither replace nor remove keeps the memory shut
// (a later start would trust it); a clean stop writes what the memory held; a failed write at
// stop is an error, and the next start (finding the running record) keeps the blackout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  claimFor,
  ReplayKeeper,
  replayRecordFile,
  replayRecordFileFor,
  SeenForwards,
  serializeStopped,
  type RecordRead,
  type ReplayRecordStore,
} from '#src/mesh/forwarding/index.ts';

const S = 1_800_000_000_000;
const SKEW = 30_000;
const OWNER = { site: 'c', publicKey: 'c-key' };

interface FakeStore extends ReplayRecordStore {
  text: string | undefined;
  failWrite: boolean;
  failRemove: boolean;
}

function fakeStore(text?: string): FakeStore {
  const store: FakeStore = {
    path: '/k/c.key.replay.json',
    text,
    failWrite: false,
    failRemove: false,
    read: (): Promise<RecordRead> =>
      Promise.resolve(store.text === undefined ? { kind: 'absent' } : { kind: 'text', text: store.text }),
    write: (next: string): Promise<void> => {
      if (store.failWrite) return Promise.reject(new Error(`replay record ${store.path}: cannot write it (ENOSPC)`));
      store.text = next;
      return Promise.resolve();
    },
    remove: (): Promise<void> => {
      if (store.failRemove) return Promise.reject(new Error('EROFS'));
      store.text = undefined;
      return Promise.resolve();
    },
  };
  return store;
}

function logged(): {
  lines: { level: string; message: string }[];
  log: { info: (f: object, m: string) => void; warn: (f: object, m: string) => void; error: (f: object, m: string) => void };
} {
  const lines: { level: string; message: string }[] = [];
  const at =
    (level: string) =>
    (_fields: object, message: string): void =>
      void lines.push({ level, message });
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } };
}

function keeperOf(store: FakeStore, nowMs: number) {
  const seen = new SeenForwards(nowMs, { starting: true });
  const { lines, log } = logged();
  const keeper = new ReplayKeeper({
    store,
    seen,
    now: () => nowMs,
    log,
    maxEntries: () => 100,
    skewMs: () => SKEW,
    ranBefore: () => Promise.resolve(false),
  });
  return { seen, lines, keeper };
}

const fresh = (nonce: string, nowMs: number) => claimFor('a', nonce, nowMs, nowMs + SKEW, SKEW);
const verdict = (v: { ok: boolean; rejection?: string }): string => (v.ok ? 'ok' : (v.rejection ?? ''));

test('a clean stop then a start: the used signature refused, a fresh one taken; the running record written before the memory opened', async () => {
  const store = fakeStore();
  const first = keeperOf(store, S);
  assert.equal(verdict(first.seen.hold(fresh('a'.repeat(22), S), S)), 'replay_unavailable', 'shut until restored');
  await first.keeper.restore(OWNER, S);
  assert.match(store.text ?? '', /"state":"running"/);
  assert.equal(verdict(first.seen.claim(fresh('a'.repeat(22), S), S)), 'ok', 'a first run takes forwards at once');
  assert.equal(await first.keeper.save(), true);
  assert.match(store.text ?? '', /"state":"stopped"/);
  const second = keeperOf(store, S + 2_000);
  await second.keeper.restore(OWNER, S + 2_000);
  assert.equal(verdict(second.seen.hold(fresh('a'.repeat(22), S), S + 2_000)), 'replayed');
  assert.equal(verdict(second.seen.hold(fresh('b'.repeat(22), S + 2_000), S + 2_000)), 'ok');
});

test('a running record it cannot write: the blackout, warned', async () => {
  const store = fakeStore();
  store.failWrite = true;
  const run = keeperOf(store, S);
  await run.keeper.restore(OWNER, S);
  assert.equal(verdict(run.seen.hold(fresh('a'.repeat(22), S), S)), 'replayed', 'the blackout');
  assert.ok(
    run.lines.some(
      (l) =>
        l.level === 'warn' &&
        /cannot write it \(ENOSPC\): forwards an earlier run could have accepted are refused until/.test(l.message),
    ),
  );
});

test('a stale stopped record it can neither replace nor remove: no forward is taken, an error says why', async () => {
  const store = fakeStore(serializeStopped(OWNER, S - 60_000, S - 1_000, SKEW, { refusedBeforeMs: 0, used: new Map() }));
  store.failWrite = true;
  store.failRemove = true;
  const run = keeperOf(store, S);
  await run.keeper.restore(OWNER, S);
  assert.equal(verdict(run.seen.hold(fresh('a'.repeat(22), S + SKEW), S + SKEW)), 'replay_unavailable');
  assert.ok(
    run.lines.some(
      (l) => l.level === 'error' && /nor remove it: a later start would take it for this run's record/.test(l.message),
    ),
  );
  // Removable: it is removed, and this run takes the blackout.
  store.failRemove = false;
  const next = keeperOf(store, S);
  await next.keeper.restore(OWNER, S);
  assert.equal(store.text, undefined, 'the stale record removed');
  assert.equal(verdict(next.seen.hold(fresh('a'.repeat(22), S + SKEW), S + SKEW)), 'ok', 'the blackout, then forwards');
});

test('a record it cannot write at stop: an error, and the next start keeps the blackout', async () => {
  const store = fakeStore();
  const run = keeperOf(store, S);
  await run.keeper.restore(OWNER, S);
  store.failWrite = true;
  assert.equal(await run.keeper.save(), false);
  assert.ok(run.lines.some((l) => l.level === 'error' && /the next start refuses forwards for max_clock_skew/.test(l.message)));
  store.failWrite = false;
  const next = keeperOf(store, S + 1_000);
  await next.keeper.restore(OWNER, S + 1_000);
  assert.equal(verdict(next.seen.hold(fresh('b'.repeat(22), S + 1_000), S + 1_000)), 'replayed');
  assert.ok(next.lines.some((l) => l.level === 'warn' && /did not stop cleanly/.test(l.message)));
});

test('the record file: beside the peer key file, else the key file; written 0600 with no temporary file left; read bounded', async () => {
  assert.equal(replayRecordFileFor({ keyFile: '/k/site.key' }), '/k/site.key.replay.json');
  assert.equal(replayRecordFileFor({ keyFile: '/k/site.key', peerKeyFile: '/k/replica-2.key' }), '/k/replica-2.key.replay.json');
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-replay-file-'));
  try {
    const file = replayRecordFile(join(dir, 'c.key.replay.json'));
    assert.deepEqual(await file.read(1_000), { kind: 'absent' });
    await file.write('{"v":1}\n');
    await file.write('{"v":1,"x":2}\n');
    assert.deepEqual(await file.read(1_000), { kind: 'text', text: '{"v":1,"x":2}\n' });
    assert.equal((await stat(file.path)).mode & 0o777, 0o600);
    assert.deepEqual(await readdir(dir), ['c.key.replay.json'], 'no temporary file left');
    await writeFile(file.path, 'x'.repeat(2_000));
    const big = await file.read(1_000);
    assert.equal(big.kind, 'unreadable');
    if (big.kind === 'unreadable') assert.match(big.problem, /larger than 1000 bytes/);
    await file.remove();
    await file.remove();
    assert.deepEqual(await file.read(1_000), { kind: 'absent' });
    const nowhere = replayRecordFile(join(dir, 'missing-dir', 'c.key.replay.json'));
    await assert.rejects(
      nowhere.write('{}'),
      /^Error: replay record \S+missing-dir\/c\.key\.replay\.json: cannot write it \(ENOENT/,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
