// The state file's write count and its write mark: every transaction counts itself; a failed one
// marks the file as lacking writes since then (the mark beside it, a fixed 512 bytes rewritten in
// place); the next start flags a file older than its mark, or a mark left "unsaved", with a
// warning naming the file, both writes and what to do.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ManualClock } from '#src/core/clock.ts';
import {
  decodeMark,
  describeWriteError,
  encodeMark,
  judgeStaleness,
  MARK_BYTES,
  MARK_SUFFIX,
  openStateDb,
  STATE_FILE_NAME,
  type WriteMark,
} from '#src/state/index.ts';
import { keptLog, withStateDir } from '#test/fixtures/state-dirs.ts';

const withDir = withStateDir;

/** What node:sqlite throws when the disk is full. */
const diskFull = (): Error =>
  Object.assign(new Error('database or disk is full'), {
    code: 'ERR_SQLITE_ERROR',
    errcode: 13,
    errstr: 'database or disk is full',
  });
const clean: WriteMark = { seq: 7, savedAt: '2026-12-02T10:00:00.000Z', unsavedSince: null, reason: null };
const insert = (n: number): string => `INSERT INTO tenant_usage VALUES ('2026-12-02', 't', 'm${n}', 1, 2, 3)`;

test('encodeMark / decodeMark: one fixed-size JSON line, read back as written; anything else is a problem', () => {
  const unsaved: WriteMark = {
    seq: 3,
    savedAt: null,
    unsavedSince: '2026-12-02T10:00:00.000Z',
    reason: 'SQLITE_FULL (disk full): database or disk is full',
  };
  for (const mark of [clean, unsaved]) {
    const bytes = encodeMark(mark);
    assert.equal(bytes.length, MARK_BYTES);
    assert.deepEqual(decodeMark(bytes.toString('utf8')), mark);
  }
  for (const long of ['x'.repeat(5_000), 'é'.repeat(400), '\u0001'.repeat(300)]) {
    const bytes = encodeMark({ ...unsaved, reason: long });
    assert.equal(bytes.length, MARK_BYTES, 'a long reason is cut to fit');
    const back = decodeMark(bytes.toString('utf8'));
    assert.ok(!('problem' in back) && back.seq === 3 && back.unsavedSince === unsaved.unsavedSince, JSON.stringify(back));
  }
  for (const text of [
    '',
    'garbage',
    '[]',
    '{"v":2,"seq":1,"saved_at":null,"unsaved_since":null,"reason":null}',
    '{"v":1,"seq":-1,"saved_at":null,"unsaved_since":null,"reason":null}',
    '{"v":1,"seq":1,"saved_at":5,"unsaved_since":null,"reason":null}',
  ]) {
    assert.ok('problem' in decodeMark(text), JSON.stringify(text));
  }
});

test('judgeStaleness: a file older than the mark, or a mark left unsaved, is stale; a file at or past the mark is not', () => {
  assert.equal(judgeStaleness(clean, 7), undefined);
  assert.equal(judgeStaleness(clean, 9), undefined, 'the file ahead of the mark: a mark write that did not happen, nothing lost');
  assert.match(judgeStaleness(clean, 5)?.reason ?? '', /holds write 5, older than write 7 .*at 2026-12-02T10:00:00.000Z/);
  const left = judgeStaleness(
    { ...clean, unsavedSince: '2026-12-02T11:00:00.000Z', reason: 'SQLITE_FULL (disk full): database or disk is full' },
    7,
  );
  assert.match(
    left?.reason ?? '',
    /could not save usage counted since 2026-12-02T11:00:00.000Z \(SQLITE_FULL \(disk full\): database or disk is full\)/,
  );
});

test('describeWriteError names SQLite\u2019s code or the errno with the message', () => {
  assert.equal(describeWriteError(diskFull()), 'SQLITE_FULL (disk full): database or disk is full');
  assert.equal(
    describeWriteError(Object.assign(new Error('no space left on device, write'), { code: 'ENOSPC' })),
    'ENOSPC: no space left on device, write',
  );
  assert.equal(describeWriteError('plain'), 'plain');
});

test('each committed transaction counts one write in the file and the mark; a failed one marks the file as lacking writes since then', () =>
  withDir(({ dir }) => {
    const clock = new ManualClock(Date.parse('2026-12-02T10:00:00Z'));
    const fault = { fail: false };
    const { log, lines } = keptLog();
    const db = openStateDb(dir, {
      log,
      clock,
      faults: {
        beforeCommit: () => {
          if (fault.fail) throw diskFull();
        },
      },
    });
    const file = join(dir, STATE_FILE_NAME);
    const mark = (): WriteMark => decodeMark(readFileSync(file + MARK_SUFFIX, 'utf8')) as WriteMark;
    try {
      assert.equal(statSync(file + MARK_SUFFIX).size, MARK_BYTES);
      assert.equal(statSync(file + MARK_SUFFIX).mode & 0o777, 0o600);
      assert.deepEqual(mark(), { seq: 0, savedAt: null, unsavedSince: null, reason: null });
      db.transaction(() => db.prepare(insert(1)).run());
      db.transaction(() => db.prepare(insert(2)).run());
      assert.deepEqual(mark(), { seq: 2, savedAt: '2026-12-02T10:00:00.000Z', unsavedSince: null, reason: null });
      assert.equal(db.writes().status, 'ok');
      clock.advance(60_000);
      fault.fail = true;
      assert.throws(() => db.transaction(() => db.prepare(insert(3)).run()), /disk is full/);
      clock.advance(1_000);
      assert.throws(() => db.transaction(() => db.prepare(insert(4)).run()), /disk is full/);
      const failing = db.writes();
      assert.equal(failing.status, 'failing');
      assert.equal(failing.failures, 2);
      assert.equal(failing.failingSince, '2026-12-02T10:01:00.000Z', 'since the first failure');
      assert.equal(failing.reason, 'SQLITE_FULL (disk full): database or disk is full');
      assert.equal(failing.lastWriteSeq, 2);
      assert.deepEqual(mark(), {
        seq: 2,
        savedAt: '2026-12-02T10:00:00.000Z',
        unsavedSince: '2026-12-02T10:01:00.000Z',
        reason: failing.reason,
      });
      assert.equal(db.prepare('SELECT count(*) AS n FROM tenant_usage').get()?.n, 2, 'the failed writes were rolled back');
      fault.fail = false;
      db.transaction(() => db.prepare(insert(5)).run());
      assert.equal(db.writes().status, 'ok');
      assert.deepEqual(mark(), { seq: 3, savedAt: '2026-12-02T10:01:01.000Z', unsavedSince: null, reason: null });
      assert.ok(lines.some((l) => l.message === 'the state file is written again'));
    } finally {
      db.close();
    }
    const { log: log2, lines: lines2 } = keptLog();
    const again = openStateDb(dir, { log: log2 });
    try {
      assert.deepEqual(
        lines2.filter((l) => l.level === 'warn'),
        [],
        'a file at its mark is not flagged',
      );
      assert.equal(again.writes().stale, null);
      assert.equal(again.writes().lastWriteSeq, 3);
    } finally {
      again.close();
    }
  }));

test('a run that ends with writes failing: the next start flags the file as stale, naming it, since when, why, and what to do', () =>
  withDir(({ dir }) => {
    const clock = new ManualClock(Date.parse('2026-12-02T10:00:00Z'));
    const first = openStateDb(dir, {
      log: keptLog().log,
      clock,
      faults: {
        beforeCommit: () => {
          throw diskFull();
        },
      },
    });
    assert.throws(() => first.transaction(() => first.prepare(insert(1)).run()));
    first.close();
    const { log, lines } = keptLog();
    const second = openStateDb(dir, { log });
    try {
      const warning = lines.find((l) => l.level === 'warn');
      assert.ok(warning, 'a warning at start');
      assert.match(
        warning.message,
        /the state file is stale: the last run could not save usage counted since 2026-12-02T10:00:00.000Z \(SQLITE_FULL/,
      );
      assert.equal(warning.fields.file, join(dir, STATE_FILE_NAME));
      assert.match(String(warning.fields.advice), /restore the newer file.*lower the affected tenants/);
      assert.deepEqual(second.writes().stale, { reason: warning.fields.reason, fileSeq: 0, markSeq: 0 });
    } finally {
      second.close();
    }
    const { log: log3, lines: lines3 } = keptLog();
    openStateDb(dir, { log: log3 }).close();
    assert.deepEqual(
      lines3.filter((l) => l.level === 'warn'),
      [],
      'flagged once: the start marks the file as it found it',
    );
  }));

test('a state file replaced by an older copy (a restored backup) is flagged at start: its write is older than the mark\u2019s', () =>
  withDir(({ dir }) => {
    const file = join(dir, STATE_FILE_NAME);
    const db = openStateDb(dir, { log: keptLog().log });
    db.transaction(() => db.prepare(insert(1)).run());
    db.close();
    copyFileSync(file, `${file}.backup`);
    const later = openStateDb(dir, { log: keptLog().log });
    later.transaction(() => later.prepare(insert(2)).run());
    later.transaction(() => later.prepare(insert(3)).run());
    later.close();
    copyFileSync(`${file}.backup`, file);
    const { log, lines } = keptLog();
    const restored = openStateDb(dir, { log });
    try {
      assert.match(
        lines.find((l) => l.level === 'warn')?.message ?? '',
        /stale: the state file holds write 1, older than write 3 the gateway committed/,
      );
      assert.deepEqual({ ...restored.writes().stale }, { reason: restored.writes().stale?.reason, fileSeq: 1, markSeq: 3 });
    } finally {
      restored.close();
    }
  }));
