// What only the `switchyard serve` process can show: the log output its own logger writes (no
// secret in it), a real SIGHUP re-reading the config file, and SIGTERM draining a stream before
// exit 0. Everything else about the request path runs in process (in-process-fleet.ts).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { request } from 'undici';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startSimFleet, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { startGatewayProcess, type GatewayProcess } from '#test/fixtures/processes.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const CLIENT_KEY = 'client-key-7f3a9c';
const ADMIN_TOKEN = 'admin-token-51be02';
const NODE_KEY = 'node-key-c0ffee';
const ADMIN_AUTH = { authorization: `Bearer ${ADMIN_TOKEN}` };

let sim: SimFleet;
let gw: GatewayProcess;

/** The gateway config: the locked node always, the open one when `withOpen`. */
function configText(withOpen: boolean): string {
  const locked = `[[nodes]]\nname = "locked"\nurl = "${sim.url('locked')}"\nkind = "vllm"\napi_key = "env:NODE_KEY"\n`;
  const open = withOpen ? `[[nodes]]\nname = "open"\nurl = "${sim.url('open')}"\nkind = "vllm"\n` : '';
  return gatewayToml([], `[admin]\ntoken = "env:ADMIN_TOKEN"\n${locked}${open}`, 'api_keys = ["env:CLIENT_KEY"]');
}

const adminHealth = async (): Promise<{ healthy?: number; details?: { name: string }[] }> =>
  (await httpJson('GET', `${gw.url}/health`, undefined, ADMIN_AUTH)).json();

before(async () => {
  sim = await startSimFleet(`
[[node]]
name = "locked"
kind = "vllm"
models = ["m"]
api_key = "${NODE_KEY}"
ttft = "5ms"

[[node]]
name = "open"
kind = "vllm"
models = ["m-open"]
ttft = "5ms"
`);
  gw = await startGatewayProcess(configText(false), { CLIENT_KEY, ADMIN_TOKEN, NODE_KEY });
  await untilEvent(async () => (await adminHealth()).healthy === 1, [gw.process.output], 'node healthy');
});

after(async () => {
  await gw?.stop();
  await sim?.close();
});

const chat = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

test('no secret ever appears in the logs', async () => {
  await httpJson('POST', `${gw.url}/v1/chat/completions`, chat, { authorization: 'Bearer wrong-guess-123' });
  await httpJson('POST', `${gw.url}/v1/chat/completions`, chat, { authorization: `Bearer ${CLIENT_KEY}` });
  const text = gw.process.lines.join('\n') + gw.process.stderr.join('\n');
  for (const secret of [CLIENT_KEY, ADMIN_TOKEN, NODE_KEY])
    assert.ok(!text.includes(secret), `log leaked ${secret.slice(0, 6)}…`);
});

test('a real SIGHUP re-reads the config file', async () => {
  await writeFile(gw.configPath, configText(true));
  gw.process.child.kill('SIGHUP');
  await gw.process.waitForLine((l) => l.includes('"config reloaded"'));
  assert.deepEqual(
    (await adminHealth()).details?.map((d) => d.name),
    ['locked', 'open'],
  );
  const res = await httpJson(
    'POST',
    `${gw.url}/v1/chat/completions`,
    { ...chat, model: 'm-open' },
    { authorization: `Bearer ${CLIENT_KEY}` },
  );
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers['x-switchyard-node'], 'open');
});

test('a streaming request in flight finishes when the gateway gets SIGTERM, and it exits 0', async () => {
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${CLIENT_KEY}` },
    body: JSON.stringify({ ...chat, stream: true, max_tokens: 60 }),
  });
  const body = res.body.text();
  gw.process.child.kill('SIGTERM');
  const text = await body;
  assert.match(text, /data: \[DONE\]/);
  const code = await new Promise<number | null>((resolve) => gw.process.child.once('exit', (c) => resolve(c)));
  assert.equal(code, 0);
});
