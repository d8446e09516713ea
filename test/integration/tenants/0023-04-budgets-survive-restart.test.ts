// Issue 23, item 4: budgets survive restarts. On the base commit there was no state file: a restart
// forgot every tenant's usage of the day. Here (a) a child process writing usage through the
// flusher is SIGKILLed mid-stream, three times: each reopening finds every row of the last write it
// reported (or of a later one), all rows of one and the same write (a write is one transaction),
// and a file SQLite's integrity check passes; (b) a gateway with [server] state_dir opens the file
// at start and closes it at stop, refuses to start on a file with a newer schema (naming it), and
// warns at start when a tenant has tokens_per_day but there is no state_dir; (c) the usage part
// hands today's stored rows to the next ledger; (d) `switchyard serve` on a damaged file exits 1
// with one fatal line naming the file and the way out, and leaves the file as it was.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { openStateDb, SCHEMA_VERSION, STATE_FILE_NAME, StateFileError } from '#src/state/index.ts';
import { openUsageStore, type UsageRow } from '#src/tenants/index.ts';
import { utcDay } from '#src/tenants/limits.ts';
import { UsagePart } from '#src/tenants/usage-part.ts';
import { loadConfig } from '#src/config-tables.ts';
import { ManualClock } from '#src/core/clock.ts';
import { capturedLogger } from '#test/fixtures/captured-logs.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startInProcessGateway } from '#test/fixtures/in-process.ts';
import { keptLog, tempStateDir } from '#test/fixtures/state-dirs.ts';
import { runCliToExit } from '#test/fixtures/processes.ts';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

const WRITER = fileURLToPath(new URL('../../fixtures/usage-writer.ts', import.meta.url));
const TENANTS = 10;
const MODELS = 50;
/** Writes a round waits for before the kill: enough that the kill lands while writes go on. */
const WRITES_BEFORE_KILL = 25;
const WAIT_MS = 120_000;

/** Starts the writer; resolves with the last generation it reported once it reported `writes` writes, then SIGKILLs it. */
async function writeThenKill(dir: string, writes: number): Promise<{ started: number; lastSaved: number }> {
  const child: ChildProcess = spawn(process.execPath, [WRITER, dir, String(TENANTS), String(MODELS)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const killAtExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killAtExit);
  const exited = once(child, 'exit');
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => stderr.push(line));
  try {
    const seen = { started: -1, saved: [] as number[] };
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the writer reported ${seen.saved.length} writes in ${WAIT_MS} ms; stderr: ${stderr.join('\n')}`)),
        WAIT_MS,
      );
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the writer exited early (${code ?? signal}); stderr: ${stderr.join('\n')}`));
      });
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const [word, value] = line.split(' ');
        if (word === 'started') seen.started = Number(value);
        if (word === 'saved') seen.saved.push(Number(value));
        if (seen.saved.length === writes) {
          clearTimeout(timer);
          // Killed at once, while it goes on writing: the kill may land inside a transaction.
          child.kill('SIGKILL');
          resolve();
        }
      });
    });
    const [, signal] = await exited;
    assert.equal(signal, 'SIGKILL');
    return { started: seen.started, lastSaved: seen.saved.at(-1) ?? -1 };
  } finally {
    child.kill('SIGKILL');
    process.off('exit', killAtExit);
  }
}

test(
  'a writer killed with SIGKILL mid-stream loses at most the write in progress; the file stays consistent',
  { timeout: 4 * WAIT_MS },
  async () => {
    const t = tempStateDir();
    try {
      let previous = 0;
      for (let round = 0; round < 3; round++) {
        const { started, lastSaved } = await writeThenKill(t.dir, WRITES_BEFORE_KILL);
        assert.equal(started, previous + 1, `round ${round}: the writer restored the generation the file held (${previous})`);
        // Reopened as the next gateway would: its integrity check first (openStateDb's quick_check runs too).
        const raw = new DatabaseSync(join(t.dir, STATE_FILE_NAME));
        assert.deepEqual(
          raw
            .prepare('PRAGMA integrity_check')
            .all()
            .map((r) => r.integrity_check),
          ['ok'],
          `round ${round}`,
        );
        raw.close();
        const store = openUsageStore(t.dir, keptLog().log);
        assert.ok(store);
        try {
          const rows = store.load(utcDay(Date.now()));
          const generations = new Set(rows.map((r) => r.requests));
          assert.equal(rows.length, TENANTS * MODELS, `round ${round}: every row is there`);
          assert.equal(
            generations.size,
            1,
            `round ${round}: every row from one write (one transaction): ${[...generations].join(', ')}`,
          );
          const [stored = -1] = generations;
          assert.ok(
            stored >= lastSaved,
            `round ${round}: the file holds write ${stored}, not older than the last reported (${lastSaved})`,
          );
          assert.ok(
            rows.every((r) => r.promptTokens === stored * 1_000 && r.completionTokens === stored * 7),
            `round ${round}: each row whole`,
          );
          previous = stored;
        } finally {
          store.close();
        }
      }
    } finally {
      t.remove();
    }
  },
);

test('a gateway with state_dir holds the file while it runs and releases it at stop', async () => {
  const t = tempStateDir();
  try {
    const toml = gatewayToml([{ name: 'n', url: 'http://127.0.0.1:9/', kind: 'vllm' }], '', `state_dir = "${t.dir}"`);
    const gw = await startInProcessGateway(toml);
    try {
      assert.throws(
        () => openStateDb(t.dir, keptLog()),
        (e: unknown) => e instanceof StateFileError && e.problem === 'in_use',
      );
    } finally {
      await gw.close();
    }
    openStateDb(t.dir, keptLog()).close();
  } finally {
    t.remove();
  }
});

test('a gateway that cannot listen releases its state file (a later start on the same state_dir is not refused as in use)', async () => {
  const t = tempStateDir();
  const blocker = createServer();
  try {
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    const toml = gatewayToml([{ name: 'n', url: 'http://127.0.0.1:9/', kind: 'vllm' }], '', `state_dir = "${t.dir}"`).replace(
      'listen = "127.0.0.1:0"',
      `listen = "127.0.0.1:${port}"`,
    );
    await assert.rejects(startInProcessGateway(toml), /EADDRINUSE/);
    openStateDb(t.dir, keptLog()).close();
  } finally {
    blocker.close();
    t.remove();
  }
});

test('a gateway refuses to start on a state file with a newer schema, naming the file and both versions', async () => {
  const t = tempStateDir();
  try {
    openStateDb(t.dir, keptLog()).close();
    const file = join(t.dir, STATE_FILE_NAME);
    const later = new DatabaseSync(file);
    later.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
    later.close();
    const toml = gatewayToml([{ name: 'n', url: 'http://127.0.0.1:9/', kind: 'vllm' }], '', `state_dir = "${t.dir}"`);
    await assert.rejects(startInProcessGateway(toml), (error: unknown) => {
      assert.ok(error instanceof StateFileError);
      assert.equal(error.problem, 'newer_schema');
      assert.ok(
        error.message.includes(file) &&
          error.message.includes(`version ${SCHEMA_VERSION + 1}`) &&
          error.message.includes(`(${SCHEMA_VERSION})`),
        error.message,
      );
      return true;
    });
  } finally {
    t.remove();
  }
});

test('a tenant with tokens_per_day and no state_dir: a warning at start that restarts reset the budget', async () => {
  const tenants =
    '[[tenants]]\nname = "capped"\nkeys = ["k-capped"]\ntokens_per_day = 1000\n[[tenants]]\nname = "free"\nkeys = ["k-free"]\n';
  const gw = await startInProcessGateway(gatewayToml([{ name: 'n', url: 'http://127.0.0.1:9/', kind: 'vllm' }], tenants));
  try {
    const warning = gw.logs().find((l) => typeof l.msg === 'string' && l.msg.includes('tokens_per_day'));
    assert.ok(warning, 'a warning about tokens_per_day');
    assert.equal(warning.level, 40);
    assert.deepEqual(warning.tenants, ['capped']);
    assert.match(String(warning.msg), /state_dir/);
  } finally {
    await gw.close();
  }
});

test('the usage part hands today’s stored rows to the next ledger at start, and writes the last ones at stop', () => {
  const t = tempStateDir();
  const clock = new ManualClock(Date.parse('2026-12-02T23:00:00Z'));
  const loaded = loadConfig(
    `[server]\nstate_dir = "${t.dir}"\n[[tenants]]\nname = "capped"\nkeys = ["k"]\ntokens_per_day = 1000\n[[nodes]]\nname = "n"\nurl = "http://127.0.0.1:9/"\nkind = "vllm"\n`,
    {},
  );
  const row = (requests: number, day = '2026-12-02'): UsageRow => ({
    tenant: 'capped',
    model: 'm',
    day,
    requests,
    promptTokens: requests * 100,
    completionTokens: requests,
  });
  const ledger = (rows: UsageRow[]) => ({
    rows,
    restored: [] as UsageRow[],
    usageRows: () => rows,
    restore(r: readonly UsageRow[]) {
      this.restored.push(...r);
    },
  });
  try {
    assert.ok(loaded.ok, JSON.stringify(loaded));
    const first = ledger([row(3), row(9, '2026-12-01')]);
    const a = new UsagePart(loaded.config, { clock, logger: capturedLogger().logger });
    a.connect(first);
    a.start();
    assert.deepEqual(first.restored, [], 'a new file: nothing to restore');
    first.rows[0] = row(4);
    a.stop();
    const second = ledger([]);
    const b = new UsagePart(loaded.config, { clock, logger: capturedLogger().logger });
    b.connect(second);
    assert.deepEqual(second.restored, [row(4)], 'today’s rows, as the last stop wrote them');
    b.stop();
    // The next UTC day starts with nothing to restore.
    clock.advance(3_600_000);
    const third = ledger([]);
    const c = new UsagePart(loaded.config, { clock, logger: capturedLogger().logger });
    c.connect(third);
    assert.deepEqual(third.restored, []);
    c.stop();
  } finally {
    t.remove();
  }
});

test('switchyard serve on a damaged state file: exit 1, one fatal line naming the file and the way out, the file unchanged', async () => {
  const t = tempStateDir();
  try {
    openStateDb(t.dir, keptLog()).close();
    const file = join(t.dir, STATE_FILE_NAME);
    writeFileSync(file, 'this is not what the gateway wrote\n'.repeat(200));
    const config = join(t.dir, '..', 'switchyard.toml');
    writeFileSync(
      config,
      `[server]\nlisten = "127.0.0.1:0"\nstate_dir = "${t.dir}"\n[[nodes]]\nname = "n"\nurl = "http://127.0.0.1:9/"\nkind = "vllm"\n`,
    );
    const run = await runCliToExit(['serve', '--config', config]);
    assert.equal(run.code, 1, `stdout: ${run.stdout}\nstderr: ${run.stderr}`);
    const fatal = run.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.level === 60);
    assert.ok(fatal, run.stdout);
    assert.match(
      String(fatal.msg),
      new RegExp(
        `could not start the gateway: the state file ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not a usable SQLite database.*move it away`,
      ),
    );
    assert.doesNotMatch(run.stderr, /at openStateDb/, 'no stack trace on stderr');
    assert.match(readFileSync(file, 'utf8'), /^this is not what the gateway wrote/);
  } finally {
    t.remove();
  }
});
