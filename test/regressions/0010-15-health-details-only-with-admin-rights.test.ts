// Issue 10, item 15: GET /health gave anonymous clients the whole fleet — node URLs, errors, every
// model name — on the main listener even with api_keys, [admin] listen and [admin] token set
// (docs/config.md claimed it answered 404 there). Now everyone gets {"status"} with the HTTP
// status a load balancer needs; the detailed report only on a listener that serves the admin
// routes, to a caller who passes the admin read check (the admin token when one is set).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { pino } from 'pino';
import { loadConfig } from '#src/config-tables.ts';
import { Gateway } from '#src/main.ts';
import { httpJson } from '#test/fixtures/http.ts';

const ADMIN_TOKEN = 'admin-token-9d1e44';
const CLIENT_KEY = 'client-key-5a0b71';

let node: Server;
let nodeUrl: string;

before(async () => {
  // A vLLM-like node: healthy, serving one model with a name worth hiding.
  node = createServer((req, res) => {
    const body =
      req.url === '/v1/models' ? { object: 'list', data: [{ id: 'secret-model', object: 'model', max_model_len: 4096 }] } : {};
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', () => resolve()));
  const address = node.address();
  assert.ok(address !== null && typeof address === 'object');
  nodeUrl = `http://127.0.0.1:${address.port}`;
});

after(() => new Promise<void>((resolve) => node.close(() => resolve())));

async function startGateway(extra: string): Promise<Gateway> {
  const toml = `[server]\nlisten = "127.0.0.1:0"\n${extra}\n[[nodes]]\nname = "gpu-1"\nurl = "${nodeUrl}"\nkind = "vllm"\n`;
  const loaded = loadConfig(toml, { ADMIN_TOKEN, CLIENT_KEY });
  assert.ok(loaded.ok, JSON.stringify(loaded));
  return Gateway.start({ config: loaded.config, logger: pino({ level: 'silent' }) });
}

async function assertStatusOnly(url: string, headers: Record<string, string> = {}): Promise<void> {
  const res = await httpJson('GET', `${url}/health`, undefined, headers);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.json(), { status: 'ok' });
  assert.ok(!res.text.includes(nodeUrl) && !res.text.includes('secret-model') && !res.text.includes('gpu-1'), res.text);
}

async function assertDetailed(url: string, headers: Record<string, string> = {}): Promise<void> {
  const res = await httpJson('GET', `${url}/health`, undefined, headers);
  assert.equal(res.status, 200, res.text);
  const report = res.json<{ status: string; details: { name: string; url: string }[] }>();
  assert.equal(report.status, 'ok');
  assert.deepEqual(
    report.details.map((d) => [d.name, d.url]),
    [['gpu-1', nodeUrl]],
  );
}

describe('with client keys, an admin listener and an admin token', () => {
  let gw: Gateway;
  before(async () => {
    gw = await startGateway(`api_keys = ["env:CLIENT_KEY"]\n[admin]\nlisten = "127.0.0.1:0"\ntoken = "env:ADMIN_TOKEN"`);
  });
  after(() => gw.close());

  test('the main listener tells anyone the status and nothing else, with or without a key', async () => {
    await assertStatusOnly(gw.url);
    await assertStatusOnly(gw.url, { authorization: `Bearer ${CLIENT_KEY}` });
    await assertStatusOnly(gw.url, { authorization: `Bearer ${ADMIN_TOKEN}` });
  });

  test('the admin listener gives the details only with the admin token', async () => {
    assert.ok(gw.adminUrl !== undefined);
    await assertStatusOnly(gw.adminUrl);
    await assertStatusOnly(gw.adminUrl, { authorization: 'Bearer wrong' });
    await assertDetailed(gw.adminUrl, { authorization: `Bearer ${ADMIN_TOKEN}` });
  });
});

describe('with an admin token and admin routes on the main listener', () => {
  let gw: Gateway;
  before(async () => {
    gw = await startGateway(`[admin]\ntoken = "env:ADMIN_TOKEN"`);
  });
  after(() => gw.close());

  test('details need the admin token', async () => {
    await assertStatusOnly(gw.url);
    await assertDetailed(gw.url, { authorization: `Bearer ${ADMIN_TOKEN}` });
  });
});

describe('with an admin listener and no token', () => {
  let gw: Gateway;
  before(async () => {
    gw = await startGateway(`[admin]\nlisten = "127.0.0.1:0"`);
  });
  after(() => gw.close());

  test('details only on the admin listener, where admin reads are open', async () => {
    assert.ok(gw.adminUrl !== undefined);
    await assertStatusOnly(gw.url);
    await assertDetailed(gw.adminUrl);
  });
});

describe('with no [admin] section (admin reads open on the main listener)', () => {
  let gw: Gateway;
  before(async () => {
    gw = await startGateway('');
  });
  after(() => gw.close());

  test('the main listener keeps the detailed report', async () => {
    await assertDetailed(gw.url);
  });
});
