// Issue 10, item 16 (proxy): without [admin] token, admin changes were accepted from any loopback
// client — and behind the same-host TLS proxy that docs/security.md recommends every client is
// 127.0.0.1, so anyone on the internet could reload the config or wake nodes. A request carrying a
// proxy's forwarding headers (Forwarded, X-Forwarded-For/-Host/-Proto, X-Real-IP) is now never
// taken as local: it gets 403 saying that a token is required behind a proxy.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { loadConfig } from '#src/config-tables.ts';
import { Gateway } from '#src/main.ts';
import { httpJson } from '#test/fixtures/http.ts';

const ADMIN_TOKEN = 'admin-token-3c7f20';
const PROXY_MARKERS: Record<string, string>[] = [
  { forwarded: 'for=203.0.113.9;proto=https' },
  { 'x-forwarded-for': '203.0.113.9' },
  { 'x-real-ip': '203.0.113.9' },
  { 'x-forwarded-host': 'gateway.example.org' },
  { 'x-forwarded-proto': 'https' },
];

async function startGateway(admin: string): Promise<Gateway> {
  // The node is never reached: the wake command is `true`, and the tests only need the admin guard.
  const toml = `[server]\nlisten = "127.0.0.1:0"\n${admin}\n[[nodes]]\nname = "sleeper"\nurl = "http://127.0.0.1:1"\nkind = "vllm"\nwake = { command = ["true"] }\n`;
  const loaded = loadConfig(toml, { ADMIN_TOKEN });
  assert.ok(loaded.ok, JSON.stringify(loaded));
  return Gateway.start({ config: loaded.config, logger: pino({ level: 'silent' }) });
}

describe('without an admin token', () => {
  let gw: Gateway;
  before(async () => {
    gw = await startGateway('');
  });
  after(() => gw.close());

  test('a proxied admin change is refused with 403 saying a token is required behind a proxy', async () => {
    for (const headers of PROXY_MARKERS) {
      for (const path of ['/admin/wake?node=sleeper', '/admin/reload']) {
        const res = await httpJson('POST', `${gw.url}${path}`, undefined, headers);
        assert.equal(res.status, 403, `${path} ${JSON.stringify(headers)}: ${res.text}`);
        const { error } = res.json<{ error: { type: string; code: string; message: string } }>();
        assert.equal(error.type, 'authentication_error');
        assert.equal(error.code, 'forbidden');
        assert.match(error.message, /proxy/);
        assert.match(error.message, /\[admin\] token/);
      }
    }
  });

  test('a direct loopback client may still make changes, and proxied reads stay open', async () => {
    const direct = await httpJson('POST', `${gw.url}/admin/wake?node=nobody`);
    assert.equal(direct.status, 404, direct.text);
    const read = await httpJson('GET', `${gw.url}/admin/hosts`, undefined, { 'x-forwarded-for': '203.0.113.9' });
    assert.equal(read.status, 200, read.text);
  });
});

describe('with an admin token', () => {
  let gw: Gateway;
  before(async () => {
    gw = await startGateway(`[admin]\ntoken = "env:ADMIN_TOKEN"`);
  });
  after(() => gw.close());

  test('a proxied admin change with the token passes', async () => {
    const res = await httpJson('POST', `${gw.url}/admin/wake?node=nobody`, undefined, {
      'x-forwarded-for': '203.0.113.9',
      authorization: `Bearer ${ADMIN_TOKEN}`,
    });
    assert.equal(res.status, 404, res.text);
    assert.equal(
      (await httpJson('POST', `${gw.url}/admin/wake?node=nobody`, undefined, { 'x-forwarded-for': '203.0.113.9' })).status,
      401,
    );
  });
});
