// Security at the edges: client keys, the admin listener and token, request limits, slow clients.
// What needs the `serve` process (its log output, SIGTERM) is in serve-process.test.ts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

const CLIENT_KEY = 'client-key-7f3a9c';
const ADMIN_TOKEN = 'admin-token-51be02';
const NODE_KEY = 'node-key-c0ffee';

let sim: SimFleet;
let gw: GatewayUnderTest;

before(async () => {
  sim = await startSimFleet(`
[[node]]
name = "locked"
kind = "vllm"
models = ["m"]
api_key = "${NODE_KEY}"
ttft = "5ms"
`);
  const node = sim.nodes[0];
  assert.ok(node);
  const toml = gatewayToml(
    [],
    `[admin]\nlisten = "127.0.0.1:0"\ntoken = "env:ADMIN_TOKEN"\n[[nodes]]\nname = "locked"\nurl = "${node.url}"\nkind = "vllm"\napi_key = "env:NODE_KEY"\n`,
    `api_keys = ["env:CLIENT_KEY"]\nmax_header_bytes = "4KiB"\nheader_timeout = "1s"\nrequest_timeout = "2s"`,
  );
  gw = await startGateway(toml, { env: { CLIENT_KEY, ADMIN_TOKEN, NODE_KEY } });
  const adminUrl = String(gw.logs().find((l) => l.msg === 'gateway listening')?.admin_url);
  const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
  await untilEvent(
    async () => (await httpJson('GET', `${adminUrl}/health`, undefined, auth)).json<{ healthy?: number }>().healthy === 1,
    [nodeChanges(gw)],
    'node healthy',
  );
});

after(async () => {
  await gw?.close();
  await sim?.close();
});

const chat = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

test('without a valid client key every /v1 route answers 401 in the OpenAI shape', async () => {
  for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: `Basic ${CLIENT_KEY}` }] as Record<
    string,
    string
  >[]) {
    const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, chat, headers);
    assert.equal(res.status, 401, JSON.stringify(headers));
    const { error } = res.json<{ error: { type: string; code: string } }>();
    assert.equal(error.type, 'authentication_error');
  }
  assert.equal((await httpJson('GET', `${gw.url}/v1/models`)).status, 401);
});

test('a valid client key passes (Bearer or x-api-key), and the node receives its own key instead', async () => {
  const bearer = await httpJson('POST', `${gw.url}/v1/chat/completions`, chat, { authorization: `Bearer ${CLIENT_KEY}` });
  assert.equal(bearer.status, 200, bearer.text);
  const header = await httpJson('POST', `${gw.url}/v1/chat/completions`, chat, { 'x-api-key': CLIENT_KEY });
  assert.equal(header.status, 200, header.text);
});

test('/health stays open for load balancers, and tells them the status alone', async () => {
  const res = await httpJson('GET', `${gw.url}/health`);
  assert.equal(res.status, 200);
  assert.deepEqual(res.json(), { status: 'ok' });
});

test('admin routes and metrics live only on the admin listener, behind the admin token', async () => {
  assert.equal((await httpJson('GET', `${gw.url}/admin/hosts`)).status, 404);
  assert.equal((await httpJson('GET', `${gw.url}/metrics`)).status, 404);
  const adminUrl = String(gw.logs().find((l) => l.msg === 'gateway listening')?.admin_url);
  assert.match(adminUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal((await httpJson('GET', `${adminUrl}/admin/hosts`)).status, 401);
  assert.equal((await httpJson('GET', `${adminUrl}/metrics`, undefined, { authorization: 'Bearer nope' })).status, 401);
  const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
  assert.equal((await httpJson('GET', `${adminUrl}/admin/hosts`, undefined, auth)).status, 200);
  assert.equal((await httpJson('GET', `${adminUrl}/metrics`, undefined, auth)).status, 200);
  assert.equal((await httpJson('POST', `${adminUrl}/admin/reload`, undefined, auth)).status, 200);
});

test('a model name can never make the gateway fetch anything but its nodes', async () => {
  for (const model of ['http://169.254.169.254/latest', '../../admin/reload', 'm?x=1#frag']) {
    const res = await httpJson(
      'POST',
      `${gw.url}/v1/chat/completions`,
      { ...chat, model },
      { authorization: `Bearer ${CLIENT_KEY}` },
    );
    assert.ok([404, 503].includes(res.status), model);
  }
});

test('oversized request headers get 431', async () => {
  const res = await httpJson('GET', `${gw.url}/health`, undefined, { 'x-padding': 'y'.repeat(8 * 1024) });
  assert.equal(res.status, 431);
});

test('a slowloris client that never finishes its headers is cut off', async () => {
  const { port, hostname } = new URL(gw.url);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
  const trickle = setInterval(() => socket.write('X-Slow: 1\r\n'), 200);
  const started = Date.now();
  await new Promise<void>((resolve) => socket.once('close', () => resolve()));
  clearInterval(trickle);
  // Without the header timeout the trickle would keep it open forever; the bound is generous for a busy machine.
  assert.ok(Date.now() - started < 60_000, 'closed by the header timeout');
});
