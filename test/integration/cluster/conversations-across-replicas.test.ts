// Resumable streams across [cluster] replicas (issue 41, item 4): two replicas on one real
// redis-server in front of two llama-server routers (the simulator's). A stream started with
// X-Conversation-Id through replica A, whose client dropped mid-stream, is reattached through
// replica B — which never saw it — from the bytes the client got, byte-exact, on the router that
// holds it: B reads the conversation's owner from the store. Another tenant at B gets the unknown
// conversation's 404, and no router is asked.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startReplicas, type Replicas } from '#test/fixtures/cluster-replicas.ts';
import { waitForHost } from '#test/fixtures/context.ts';
import { httpJson, simRequests } from '#test/fixtures/http.ts';
import { startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { simRouter } from '#test/fixtures/router-fleet.ts';
import { tenantsToml } from '#test/fixtures/tenant-gateway.ts';

const ROUTERS = ['r1', 'r2'];
const A_KEY = 'sk-replica-tenant-a';
const B_KEY = 'sk-replica-tenant-b';

let sim: SimFleet | undefined;
let replicas: Replicas | undefined;

before(async () => {
  sim = await startSimFleet(
    ROUTERS.map((name) =>
      simRouter({ name, modelsMax: 1, more: ['ttft = "2ms"', 'tokens_per_second = 50'], models: [['model-a', 'loaded']] }),
    ).join(''),
  );
  const fleet = sim;
  replicas = await startReplicas({
    count: 2,
    nodes: ROUTERS.map((name) => ({ name, url: fleet.url(name), kind: 'llamacpp' })),
    extra: tenantsToml([
      { name: 'team-a', keys: [A_KEY] },
      { name: 'team-b', keys: [B_KEY] },
    ]),
  });
  for (const gw of replicas.gateways)
    for (const name of ROUTERS) await waitForHost(gw, name, (h) => h.loaded.includes('model-a'), 'model-a loaded');
});
after(async () => {
  await replicas?.close();
  await sim?.close();
});

function replica(i: number): GatewayUnderTest {
  const gw = replicas?.gateways[i];
  assert.ok(gw !== undefined);
  return gw;
}

const auth = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

test('a stream started through replica A is reattached through replica B, byte-exact, on its router; another tenant at B gets 404', async () => {
  assert.ok(sim !== undefined);
  const conv = 'conv-across-replicas';
  const controller = new AbortController();
  const answer = await request(`${replica(0).url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-conversation-id': conv, ...auth(A_KEY) },
    body: JSON.stringify({ model: 'model-a', messages: [{ role: 'user', content: 'go' }], max_tokens: 40, stream: true }),
    signal: controller.signal,
  });
  assert.equal(answer.statusCode, 200);
  const owner = String(answer.headers['x-switchyard-node']);
  const got = await new Promise<Buffer>((resolve, reject) => {
    answer.body.once('data', (chunk: Buffer) => resolve(chunk));
    answer.body.on('error', reject);
  });
  answer.body.on('error', () => {});
  controller.abort();

  const other = await httpJson('GET', `${replica(1).url}/v1/stream?conv_id=${conv}&from=0`, undefined, auth(B_KEY));
  assert.equal(other.status, 404);
  assert.equal(other.json<{ error: { code: string } }>().error.code, 'not_found');

  const replay = async (from: number): Promise<{ status: number; node: unknown; bytes: Buffer }> => {
    const res = await request(`${replica(1).url}/v1/stream?conv_id=${conv}&from=${from}`, {
      headers: auth(A_KEY),
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    return { status: res.statusCode, node: res.headers['x-switchyard-node'], bytes: Buffer.from(await res.body.arrayBuffer()) };
  };
  const rest = await replay(got.length);
  assert.equal(rest.status, 200, rest.bytes.toString());
  assert.equal(rest.node, owner);
  const whole = await replay(0);
  assert.equal(Buffer.compare(Buffer.concat([got, rest.bytes]), whole.bytes), 0, 'got at A + replay at B = the whole stream');
  assert.match(whole.bytes.toString('utf8'), /data: \[DONE\]\n\n$/);
  const asked = await Promise.all(
    ROUTERS.map(async (name) => (await simRequests(sim?.url(name) ?? '')).filter((r) => r.path === '/v1/stream').length),
  );
  assert.deepEqual(
    asked,
    ROUTERS.map((name) => (name === owner ? 2 : 0)),
  );
});
