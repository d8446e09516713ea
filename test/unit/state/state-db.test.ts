// The state file: created 0700/0600, WAL with synchronous = FULL, held exclusively, its schema
// versioned and migrated forward; a newer, damaged or foreign file is refused with an error that
// names it, and left exactly as it was.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import {
  MIGRATIONS,
  openStateDb,
  SCHEMA_VERSION,
  STATE_FILE_NAME,
  StateFileError,
  type StateFileProblem,
} from '#src/state/index.ts';
import { pendingMigrations } from '#src/state/schema.ts';
import { keptLog, withStateDir } from '#test/fixtures/state-dirs.ts';

const withDir = withStateDir;

const digest = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

function refused(open: () => unknown, problem: StateFileProblem, file: string): StateFileError {
  try {
    open();
  } catch (error) {
    assert.ok(error instanceof StateFileError, `a StateFileError, not ${String(error)}`);
    assert.equal(error.problem, problem, error.message);
    assert.equal(error.file, file);
    assert.ok(error.message.includes(file), `the message names the file: ${error.message}`);
    return error;
  }
  return assert.fail('the file was accepted');
}

test('a new state_dir is created 0700 with the file 0600, in WAL mode, synchronous = FULL, at the newest schema', () =>
  withDir(({ dir }) => {
    const { log, lines } = keptLog();
    const db = openStateDb(dir, { log });
    try {
      const file = join(dir, STATE_FILE_NAME);
      assert.equal(db.file, file);
      assert.equal(statSync(dir).mode & 0o777, 0o700);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(db.prepare('PRAGMA journal_mode').get()?.journal_mode, 'wal');
      assert.equal(db.prepare('PRAGMA synchronous').get()?.synchronous, 2, 'FULL');
      assert.equal(db.prepare('PRAGMA locking_mode').get()?.locking_mode, 'exclusive');
      assert.equal(db.prepare('PRAGMA user_version').get()?.user_version, SCHEMA_VERSION);
      assert.equal(db.version, SCHEMA_VERSION);
      assert.ok(db.prepare("SELECT name FROM sqlite_master WHERE name = 'tenant_usage'").get());
      assert.deepEqual(
        lines.filter((l) => l.level === 'warn'),
        [],
      );
      db.transaction(() => db.prepare("INSERT INTO tenant_usage VALUES ('2026-12-02', 't', 'm', 1, 2, 3)").run());
      assert.equal(statSync(`${file}-wal`).mode & 0o777, 0o600, 'the WAL file as private as the file');
    } finally {
      db.close();
    }
  }));

test('what one opening committed, the next finds; a transaction that throws leaves nothing', () =>
  withDir(({ dir }) => {
    const { log } = keptLog();
    const first = openStateDb(dir, { log });
    const insert = "INSERT INTO tenant_usage VALUES ('2026-12-02', 't', 'm', 1, 2, 3)";
    first.transaction(() => first.prepare(insert).run());
    assert.throws(
      () =>
        first.transaction(() => {
          first.prepare("INSERT INTO tenant_usage VALUES ('2026-12-02', 't', 'other', 1, 2, 3)").run();
          throw new Error('midway');
        }),
      /midway/,
    );
    first.close();
    first.close();
    const second = openStateDb(dir, { log });
    try {
      assert.deepEqual(
        second
          .prepare('SELECT model FROM tenant_usage')
          .all()
          .map((r) => r.model),
        ['m'],
      );
    } finally {
      second.close();
    }
  }));

test('a file with a newer schema is refused, naming the file and both versions, and left unchanged', () =>
  withDir(({ dir }) => {
    mkdirSync(dir);
    const file = join(dir, STATE_FILE_NAME);
    const later = new DatabaseSync(file);
    later.exec(`CREATE TABLE future (x); PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
    later.close();
    const before = digest(file);
    const error = refused(() => openStateDb(dir, keptLog()), 'newer_schema', file);
    assert.match(
      error.message,
      new RegExp(`schema version ${SCHEMA_VERSION + 1}, newer than this build knows \\(${SCHEMA_VERSION}\\)`),
    );
    assert.equal(digest(file), before);
    const reread = new DatabaseSync(file);
    assert.equal(reread.prepare('PRAGMA journal_mode').get()?.journal_mode, 'delete', 'not switched to WAL');
    reread.close();
  }));

test('a file that is not an SQLite database is refused as corrupt, and left unchanged', () =>
  withDir(({ dir }) => {
    mkdirSync(dir);
    const file = join(dir, STATE_FILE_NAME);
    writeFileSync(file, 'budgets = "not a database"\n'.repeat(300));
    const before = digest(file);
    const error = refused(() => openStateDb(dir, keptLog()), 'corrupt', file);
    assert.match(error.message, /move it away/);
    assert.equal(digest(file), before);
  }));

test('a database whose pages are damaged is refused as corrupt, and left unchanged', () =>
  withDir(({ dir }) => {
    const { log } = keptLog();
    const db = openStateDb(dir, { log });
    const insert = db.prepare('INSERT INTO tenant_usage VALUES (?, ?, ?, 1, 2, 3)');
    db.transaction(() => {
      for (let i = 0; i < 2_000; i++) insert.run('2026-12-02', `tenant-${i}`, `model-${'x'.repeat(40)}-${i}`);
    });
    db.close();
    const file = join(dir, STATE_FILE_NAME);
    const bytes = readFileSync(file);
    assert.ok(bytes.length > 16 * 4096, `${bytes.length} bytes`);
    // Pages 3 to 6 overwritten (the header and the schema page stay valid).
    bytes.fill(0x5a, 2 * 4096, 6 * 4096);
    writeFileSync(file, bytes);
    const before = digest(file);
    refused(() => openStateDb(dir, { log }), 'corrupt', file);
    assert.equal(digest(file), before);
  }));

test('a second opening of a file in use is refused as in use (a second gateway on the same state_dir)', () =>
  withDir(({ dir }) => {
    const { log } = keptLog();
    const first = openStateDb(dir, { log });
    try {
      refused(() => openStateDb(dir, { log }), 'in_use', join(dir, STATE_FILE_NAME));
    } finally {
      first.close();
    }
    openStateDb(dir, { log }).close();
  }));

test('a file opened shared ([batch] shared_dir) is opened by two at once, each seeing the other’s commits', () =>
  withDir(({ dir }) => {
    const { log } = keptLog();
    const first = openStateDb(dir, { log, shared: true });
    const second = openStateDb(dir, { log, shared: true });
    try {
      first.transaction(() =>
        first
          .prepare(
            "INSERT INTO tenant_usage (day, tenant, model, requests, prompt_tokens, completion_tokens) VALUES ('2026-01-01', 'a', 'm', 1, 0, 0)",
          )
          .run(),
      );
      assert.equal(second.prepare("SELECT requests FROM tenant_usage WHERE tenant = 'a'").get()?.requests, 1);
      second.transaction(() => second.prepare("UPDATE tenant_usage SET requests = 2 WHERE tenant = 'a'").run());
      assert.equal(first.prepare("SELECT requests FROM tenant_usage WHERE tenant = 'a'").get()?.requests, 2);
    } finally {
      first.close();
      second.close();
    }
  }));

test('a state_dir that is a file, or a directory this process cannot write, is refused as unreadable', () =>
  withDir(({ dir }) => {
    writeFileSync(dir, 'a file');
    const error = refused(() => openStateDb(dir, keptLog()), 'unreadable', join(dir, STATE_FILE_NAME));
    assert.match(error.message, /state_dir/);
  }));

test('an existing file readable by others is used, with a warning', () =>
  withDir(({ dir }) => {
    openStateDb(dir, keptLog()).close();
    chmodSync(join(dir, STATE_FILE_NAME), 0o644);
    const { log, lines } = keptLog();
    openStateDb(dir, { log }).close();
    assert.deepEqual(
      lines.filter((l) => l.level === 'warn').map((l) => l.fields.mode),
      ['0644'],
    );
  }));

test('an older file is migrated forward, one version per transaction, keeping its rows', () =>
  withDir(({ dir }) => {
    const { log, lines } = keptLog();
    const v1 = openStateDb(dir, { log });
    v1.transaction(() => v1.prepare("INSERT INTO tenant_usage VALUES ('2026-12-02', 't', 'm', 1, 2, 3)").run());
    v1.close();
    const later = [
      ...MIGRATIONS,
      { version: SCHEMA_VERSION + 1, sql: 'ALTER TABLE tenant_usage ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0' },
    ];
    const v2 = openStateDb(dir, { log, migrations: later });
    try {
      assert.equal(v2.prepare('PRAGMA user_version').get()?.user_version, SCHEMA_VERSION + 1);
      assert.deepEqual(
        { ...v2.prepare('SELECT tenant, cached_tokens FROM tenant_usage').get() },
        { tenant: 't', cached_tokens: 0 },
      );
      assert.deepEqual(
        lines.filter((l) => l.message === 'state file migrated').map((l) => l.fields.to),
        [...MIGRATIONS.map((m) => m.version), SCHEMA_VERSION + 1],
      );
    } finally {
      v2.close();
    }
  }));

test('a migration that fails leaves the file at its version, and the open fails', () =>
  withDir(({ dir }) => {
    openStateDb(dir, keptLog()).close();
    const broken = [
      ...MIGRATIONS,
      { version: SCHEMA_VERSION + 1, sql: 'CREATE TABLE half (x); ALTER TABLE nowhere ADD COLUMN y' },
    ];
    assert.throws(() => openStateDb(dir, { ...keptLog(), migrations: broken }), /nowhere/);
    const db = openStateDb(dir, keptLog());
    try {
      assert.equal(db.prepare('PRAGMA user_version').get()?.user_version, SCHEMA_VERSION);
      assert.equal(db.prepare("SELECT name FROM sqlite_master WHERE name = 'half'").get(), undefined);
    } finally {
      db.close();
    }
  }));

test('pendingMigrations: the ones past a version, in order', () => {
  const list = [
    { version: 3, sql: 'c' },
    { version: 1, sql: 'a' },
    { version: 2, sql: 'b' },
  ];
  assert.deepEqual(
    pendingMigrations(0, list).map((m) => m.sql),
    ['a', 'b', 'c'],
  );
  assert.deepEqual(
    pendingMigrations(2, list).map((m) => m.sql),
    ['c'],
  );
  assert.deepEqual(pendingMigrations(3, list), []);
});
