// The public table (proxy/) and the admin table (admin/) stay apart: with [admin] listen each
// listener serves only its own; without it the main listener serves both. /admin/runtime counts the
// requests every listener is answering (the one asking included).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { loadConfig } from '#src/config-tables.ts';
import { Gateway } from '#src/main.ts';
import { httpJson } from '#test/fixtures/http.ts';

// Nothing listens on port 1: the node never answers, which these routes do not need.
const NODE = '[[nodes]]\nname = "gpu-1"\nurl = "http://127.0.0.1:1"\nkind = "vllm"\n';

async function startGateway(extra: string): Promise<Gateway> {
  const loaded = loadConfig(`[server]\nlisten = "127.0.0.1:0"\n${extra}\n${NODE}`, {});
  assert.ok(loaded.ok, JSON.stringify(loaded));
  return Gateway.start({ config: loaded.config, logger: pino({ level: 'silent' }) });
}

let split: Gateway;
let shared: Gateway;

before(async () => {
  split = await startGateway('[admin]\nlisten = "127.0.0.1:0"\n');
  shared = await startGateway('');
});

after(async () => {
  await Promise.all([split.close(), shared.close()]);
});

test('with an admin listener, the main one serves only the public table', async () => {
  for (const path of ['/admin/hosts', '/admin/runtime', '/metrics']) {
    assert.equal((await httpJson('GET', `${split.url}${path}`)).status, 404, path);
  }
  assert.equal((await httpJson('GET', `${split.url}/v1/models`)).status, 200);
  assert.deepEqual(Object.keys((await httpJson('GET', `${split.url}/health`)).json<Record<string, unknown>>()), ['status']);
});

test('the admin listener serves only the admin table', async () => {
  assert.ok(split.adminUrl !== undefined);
  assert.equal((await httpJson('GET', `${split.adminUrl}/v1/models`)).status, 404);
  assert.equal((await httpJson('POST', `${split.adminUrl}/v1/chat/completions`, { model: 'm' })).status, 404);
  assert.equal((await httpJson('GET', `${split.adminUrl}/admin/hosts`)).status, 200);
  assert.ok('details' in (await httpJson('GET', `${split.adminUrl}/health`)).json<Record<string, unknown>>());
});

test('without an admin listener, the main one serves both tables (the admin /health wins)', async () => {
  assert.equal((await httpJson('GET', `${shared.url}/v1/models`)).status, 200);
  assert.equal((await httpJson('GET', `${shared.url}/admin/hosts`)).status, 200);
  assert.ok('details' in (await httpJson('GET', `${shared.url}/health`)).json<Record<string, unknown>>());
});

test('/admin/runtime counts the requests the listeners are answering', async () => {
  // A gateway of its own, asked nothing before: the request asking is the only one in flight.
  const fresh = await startGateway('');
  try {
    const runtime = (await httpJson('GET', `${fresh.url}/admin/runtime`)).json<{ active_requests: number }>();
    assert.equal(runtime.active_requests, 1);
  } finally {
    await fresh.close();
  }
});
