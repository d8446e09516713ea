// Issue 10, item 16 (wakes): POST /admin/wake ignored the wake window (a manual wake was "forced"),
// so 200 concurrent calls ran the wake command 200 times. Now at most one wake per node is in
// flight and none is sent again inside the wake window, whoever asks; the others answer
// 'in_window' with the state of the wake under way.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '#src/config-tables.ts';
import { Gateway } from '#src/main.ts';
import { httpJson } from '#test/fixtures/http.ts';

const CALLS = 200;

let dir: string;
let wakeLog: string;
let gw: Gateway;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchyard-wake-'));
  wakeLog = join(dir, 'wakes.log');
  // Each wake appends one line; the short sleep keeps it in flight while the other calls arrive.
  const command = JSON.stringify(['/bin/sh', '-c', `echo woke >> '${wakeLog}'; sleep 0.2`]);
  const toml = `[server]\nlisten = "127.0.0.1:0"\n[[nodes]]\nname = "sleeper"\nurl = "http://127.0.0.1:1"\nkind = "vllm"\nwake = { command = ${command} }\nwake_timeout = "10m"\n`;
  const loaded = loadConfig(toml, {});
  assert.ok(loaded.ok, JSON.stringify(loaded));
  gw = await Gateway.start({ config: loaded.config, logger: pino({ level: 'silent' }) });
});

after(async () => {
  await gw?.close();
  await rm(dir, { recursive: true, force: true });
});

test(`${CALLS} concurrent manual wakes of one node run its wake command once`, async () => {
  const answers = await Promise.all(Array.from({ length: CALLS }, () => httpJson('POST', `${gw.url}/admin/wake?node=sleeper`)));
  const results = answers.map((a) => `${a.status} ${a.json<{ result: string }>().result}`);
  assert.equal(results.filter((r) => r === '202 sent').length, 1, JSON.stringify(results.slice(0, 5)));
  assert.equal(results.filter((r) => r === '200 in_window').length, CALLS - 1);
  // The one 'sent' answer came after its command finished, so the file is complete.
  const lines = (await readFile(wakeLog, 'utf8')).split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 1);

  const later = await httpJson('POST', `${gw.url}/admin/wake?node=sleeper`);
  assert.equal(later.status, 200);
  const state = later.json<{ result: string; sent_at: string; window_ends_at: string }>();
  assert.equal(state.result, 'in_window');
  assert.equal(Date.parse(state.window_ends_at) - Date.parse(state.sent_at), 10 * 60_000);
  assert.equal((await readFile(wakeLog, 'utf8')).split('\n').filter((l) => l !== '').length, 1);
});
