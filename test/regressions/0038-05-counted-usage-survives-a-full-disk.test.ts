// Issue 38, item 5: usage dropped with the disk full. With the state directory full, a gateway
// stopped normally dropped every count since its last good write (one log line, then exit 0), and
// the restart handed the tenant 2,184 tokens of a day's budget where 60 were left; nothing showed
// the store failing meanwhile, and nothing at the restart said the file was behind.
// What must hold: a failed write keeps the counts in memory (merged, never overwritten) and is
// retried with backoff, and the first write that works holds them all; /health shows the store
// failing (degraded, with the file and the cause) and /metrics a gauge; a stop that cannot save
// says so (an error naming the file and the cause; `shutdown()` answers saved: false and
// `switchyard serve` exits non-zero); the next start flags the file as stale (a warning and /health).
// Two ways to a full disk: an injected write failure (the state store's write seam: always runs),
// and a real one, a small tmpfs filled to ENOSPC (root only; skipped with the reason elsewhere).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { STATE_FILE_NAME, type StateWriteFaults } from '#src/state/index.ts';
import type { TenantsReport, UsageStoreReport } from '#src/tenants/index.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import { startInProcessGateway, type InProcessGateway } from '#test/fixtures/in-process.ts';
import { startGatewayProcess, type GatewayProcess } from '#test/fixtures/processes.ts';
import { startRecordingUpstream, type RecordingUpstream } from '#test/fixtures/recording-upstream.ts';
import { tempStateDir } from '#test/fixtures/state-dirs.ts';
import { mountSmallDisk, type SmallDisk } from '#test/fixtures/full-disk.ts';

const chat = { model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] };
const bearer = { authorization: 'Bearer k-capped' };
/** Generous: the first write comes one flush interval (10 s) after start, on a busy machine later. */
const WRITE_WAIT_MS = 90_000;

/** What node:sqlite throws when the disk is full. */
const diskFull = (): Error =>
  Object.assign(new Error('database or disk is full'), {
    code: 'ERR_SQLITE_ERROR',
    errcode: 13,
    errstr: 'database or disk is full',
  });

function switchable(): { faults: StateWriteFaults; full: { yes: boolean } } {
  const full = { yes: false };
  return {
    full,
    faults: {
      beforeCommit: () => {
        if (full.yes) throw diskFull();
      },
    },
  };
}

const tomlFor = (upstream: RecordingUpstream, stateDir: string): string =>
  gatewayToml(
    [{ name: 'n', url: upstream.url, kind: 'vllm' }],
    '[[tenants]]\nname = "capped"\nkeys = ["k-capped"]\ntokens_per_day = 100000\n',
    `state_dir = "${stateDir}"`,
  );

interface Health {
  readonly status: string;
  readonly state?: UsageStoreReport;
}

const health = async (url: string): Promise<Health> => (await httpJson('GET', `${url}/health`)).json<Health>();

async function today(url: string): Promise<{ requests: number; promptTokens: number; completionTokens: number }> {
  const report = (await httpJson('GET', `${url}/admin/tenants`)).json<TenantsReport>();
  const capped = report.tenants.find((t) => t.name === 'capped');
  assert.ok(capped, 'capped in /admin/tenants');
  return capped.today;
}

async function answered(url: string, n: number): Promise<void> {
  await eventually(
    async () => (await httpJson('POST', `${url}/v1/chat/completions`, chat, bearer)).status === 200,
    30_000,
    'a first answer',
  );
  for (let i = 1; i < n; i++) assert.equal((await httpJson('POST', `${url}/v1/chat/completions`, chat, bearer)).status, 200);
}

const tokensOf = (t: { promptTokens: number; completionTokens: number }): number => t.promptTokens + t.completionTokens;

/** One scenario, two disks: `disk.fill()` makes the state file's writes fail, `disk.free()` lets them work. */
interface Disk {
  readonly stateDir: string;
  readonly faults?: StateWriteFaults;
  fill(): void;
  free(): void;
}

async function writesFailThenWork(disk: Disk): Promise<void> {
  const upstream = await startRecordingUpstream(['m']);
  const toml = tomlFor(upstream, disk.stateDir);
  const file = join(disk.stateDir, STATE_FILE_NAME);
  const started: InProcessGateway[] = [];
  const options = disk.faults === undefined ? {} : { stateFaults: disk.faults };
  try {
    const gw = await startInProcessGateway(toml, options);
    started.push(gw);
    disk.fill();
    await answered(gw.url, 3);
    const counted = await today(gw.url);
    // The next interval's write fails: /health says so, naming the file and the cause.
    await eventually(
      async () => (await health(gw.url)).state?.status === 'failing',
      WRITE_WAIT_MS,
      '/health showing the state store failing',
    );
    const failing = await health(gw.url);
    assert.equal(failing.status, 'degraded', 'a failing state store makes /health degraded');
    assert.equal(failing.state?.file, file);
    assert.match(failing.state?.reason ?? '', /SQLITE_FULL \(disk full\): database or disk is full/);
    assert.ok((failing.state?.failing_since ?? '') !== '', 'since when');
    assert.equal(failing.state?.unsaved.tokens, tokensOf(counted), 'every counted token is kept in memory, unsaved');
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(metrics, /^gateway_state_store_up 0$/m);
    assert.match(metrics, new RegExp(`^gateway_state_unsaved_tokens ${tokensOf(counted)}$`, 'm'));
    assert.ok(
      gw
        .logs()
        .some(
          (l) =>
            l.level === 50 && /usage could not be written to the state file; kept in memory, retrying in 1 s/.test(String(l.msg)),
        ),
      'the failure is logged with the retry',
    );
    // More usage while failing: merged with what the failed write left, not in place of it.
    await answered(gw.url, 2);
    const more = await today(gw.url);
    // Room again: the retry (1 s, 2 s, …, never later than the interval) writes everything.
    disk.free();
    await eventually(
      async () => (await health(gw.url)).state?.status === 'ok',
      WRITE_WAIT_MS,
      '/health showing the state store ok again',
    );
    const ok = await health(gw.url);
    assert.equal(ok.status, 'ok');
    assert.deepEqual(ok.state?.unsaved, { rows: 0, requests: 0, tokens: 0 });
    assert.equal(ok.state?.reason, null);
    assert.deepEqual((await gw.gateway.shutdown()).saved, true);
    started.pop();
    await gw.close();
    const again = await startInProcessGateway(toml, options);
    started.push(again);
    assert.deepEqual(await today(again.url), more, 'every count is back after the restart');
    assert.equal((await health(again.url)).state?.stale, null, 'nothing to flag');
  } finally {
    for (const gw of started) await gw.close();
    await upstream.close();
  }
}

async function stopWithDiskFull(disk: Disk): Promise<void> {
  const upstream = await startRecordingUpstream(['m']);
  const toml = tomlFor(upstream, disk.stateDir);
  const file = join(disk.stateDir, STATE_FILE_NAME);
  const started: InProcessGateway[] = [];
  const options = disk.faults === undefined ? {} : { stateFaults: disk.faults };
  try {
    const gw = await startInProcessGateway(toml, options);
    started.push(gw);
    disk.fill();
    await answered(gw.url, 4);
    const counted = await today(gw.url);
    const stopped = await gw.gateway.shutdown();
    started.pop();
    await gw.close();
    assert.equal(stopped.saved, false, 'the stop answers that usage was not saved');
    assert.ok(!stopped.saved && stopped.file === file && /SQLITE_FULL/.test(stopped.reason), JSON.stringify(stopped));
    const error = gw.logs().find((l) => l.level === 50 && /stopping without saving tenant usage/.test(String(l.msg)));
    assert.ok(error, 'an error log at stop');
    assert.equal(error.file, file);
    assert.match(String(error.reason), /SQLITE_FULL \(disk full\)/);
    assert.equal(error.unsaved_tokens, tokensOf(counted), `the error says what is lost: ${String(error.msg)}`);
    assert.ok(String(error.msg).includes(file));

    disk.free();
    const again = await startInProcessGateway(toml, options);
    started.push(again);
    const warning = again.logs().find((l) => l.level === 40 && /the state file is stale/.test(String(l.msg)));
    assert.ok(warning, 'a warning at start');
    assert.equal(warning.file, file);
    assert.match(String(warning.msg), /the last run could not save usage counted since .*SQLITE_FULL/);
    assert.match(String(warning.advice), /lower the affected tenants/);
    const flagged = await health(again.url);
    assert.match(flagged.state?.stale?.reason ?? '', /could not save usage counted since/);
    assert.match(flagged.state?.stale?.advice ?? '', /docs\/tenants\.md/);
    assert.match(await (await fetch(`${again.url}/metrics`)).text(), /^gateway_state_stale_at_start 1$/m);
  } finally {
    for (const gw of started) await gw.close();
    await upstream.close();
  }
}

function injected(): { disk: Disk; remove: () => void } {
  const state = tempStateDir();
  const { faults, full } = switchable();
  return {
    disk: { stateDir: state.dir, faults, fill: () => void (full.yes = true), free: () => void (full.yes = false) },
    remove: state.remove,
  };
}

function onTmpfs(small: SmallDisk): Disk {
  return { stateDir: join(small.dir, 'state'), fill: () => void small.fill(), free: () => small.free() };
}

test('injected write failure: /health degraded naming the file and the cause, the counts kept and merged, and the first write that works holds them all', async () => {
  const { disk, remove } = injected();
  try {
    await writesFailThenWork(disk);
  } finally {
    remove();
  }
});

test('injected write failure at stop: saved: false and an error naming the file, the cause and the tokens lost; the next start flags the file as stale', async () => {
  const { disk, remove } = injected();
  try {
    await stopWithDiskFull(disk);
  } finally {
    remove();
  }
});

for (const workers of [1, 2]) {
  test(`with [admin] listen (workers = ${workers}): the main listener's status-only /health is degraded too, the admin one says why`, async () => {
    const upstream = await startRecordingUpstream(['m']);
    const state = tempStateDir();
    const { faults, full } = switchable();
    const started: InProcessGateway[] = [];
    try {
      const toml = gatewayToml(
        [{ name: 'n', url: upstream.url, kind: 'vllm' }],
        '[admin]\nlisten = "127.0.0.1:0"\n[[tenants]]\nname = "capped"\nkeys = ["k-capped"]\ntokens_per_day = 100000\n',
        `state_dir = "${state.dir}"\nworkers = ${workers}`,
      );
      const gw = await startInProcessGateway(toml, { stateFaults: faults });
      started.push(gw);
      const adminUrl = gw.adminUrl ?? assert.fail('an admin listener');
      full.yes = true;
      await answered(gw.url, 2);
      await eventually(
        async () => (await health(adminUrl)).state?.status === 'failing',
        WRITE_WAIT_MS,
        'the admin /health showing the state store failing',
      );
      assert.deepEqual(
        (await httpJson('GET', `${gw.url}/health`)).json(),
        { status: 'degraded' },
        'the main listener: the status alone, degraded',
      );
      full.yes = false;
      await eventually(async () => (await health(adminUrl)).state?.status === 'ok', WRITE_WAIT_MS, 'the state store ok again');
      assert.deepEqual((await httpJson('GET', `${gw.url}/health`)).json(), { status: 'ok' });
    } finally {
      for (const gw of started) await gw.close();
      await upstream.close();
      state.remove();
    }
  });
}

test('a real full disk (tmpfs): writes fail with SQLITE_FULL, the counts are kept, and written once there is room', async (t) => {
  const small = mountSmallDisk(256);
  if ('skip' in small) return t.skip(small.skip);
  try {
    await writesFailThenWork(onTmpfs(small));
  } finally {
    small.unmount();
  }
});

test('a real full disk (tmpfs) at stop: saved: false with SQLITE_FULL, and the next start flags the file', async (t) => {
  const small = mountSmallDisk(256);
  if ('skip' in small) return t.skip(small.skip);
  try {
    await stopWithDiskFull(onTmpfs(small));
  } finally {
    small.unmount();
  }
});

test('switchyard serve stopped by SIGTERM with the state disk full: an error naming the file and the cause, and a non-zero exit', async (t) => {
  const small = mountSmallDisk(256);
  if ('skip' in small) return t.skip(small.skip);
  const upstream = await startRecordingUpstream(['m']);
  const running: { gw: GatewayProcess | undefined } = { gw: undefined };
  try {
    const stateDir = join(small.dir, 'state');
    const gw = await startGatewayProcess(tomlFor(upstream, stateDir));
    running.gw = gw;
    await answered(gw.url, 2);
    small.fill();
    const code = await gw.stop();
    running.gw = undefined;
    assert.equal(code, 1, `exit status 1, not 0; stdout: ${gw.process.lines.join('\n')}`);
    const file = join(stateDir, STATE_FILE_NAME);
    const error = gw.logs().find((l) => l.level === 50 && /stopping without saving tenant usage/.test(String(l.msg)));
    assert.ok(error, gw.process.lines.join('\n'));
    assert.equal(error.file, file);
    assert.match(String(error.reason), /SQLITE_FULL \(disk full\): database or disk is full/);
    assert.ok(gw.logs().some((l) => l.level === 60 && String(l.msg).includes(`stopped without saving tenant usage to ${file}`)));
    assert.ok(!gw.logs().some((l) => l.msg === 'stopped'), 'not a normal stop');
  } finally {
    await running.gw?.stop();
    await upstream.close();
    small.unmount();
  }
});
