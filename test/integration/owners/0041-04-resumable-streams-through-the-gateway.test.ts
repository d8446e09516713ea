// Issue 41 item 4 on llama-server routers (the simulator's, faithful to 3f545becc): a streamed chat
// completion sent with X-Conversation-Id through the gateway is remembered → its router for the
// tenant that sent it. A client whose connection to the gateway dropped mid-stream reattaches
// through the gateway with `GET /v1/stream?conv_id=&from=N` (N = the bytes it got) and gets every
// byte exactly once: what it got plus the replay is byte for byte the router's whole stream. Another
// tenant's GET, DELETE and lookup look exactly like an unknown conversation's and reach no router; a
// lookup naming conversations on two routers asks each router for its own ids only; DELETE reaches
// the owner; an unknown conversation is refused by the gateway without asking any router.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { httpJson, simRequests, simStats } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { startRouterRig, type RouterRig } from '#test/fixtures/router-fleet.ts';
import { tenantsToml } from '#test/fixtures/tenant-gateway.ts';

const A_KEY = 'sk-resume-tenant-a';
const B_KEY = 'sk-resume-tenant-b';
const ROUTERS = ['r1', 'r2'];

let rig: RouterRig;

before(async () => {
  rig = await startRouterRig({
    routers: [
      // Slow enough that the client leaves while the router is still generating.
      {
        name: 'r1',
        modelsMax: 1,
        loadTime: '50ms',
        more: ['ttft = "2ms"', 'tokens_per_second = 50'],
        models: [['model-a', 'loaded']],
      },
      {
        name: 'r2',
        modelsMax: 1,
        loadTime: '50ms',
        more: ['ttft = "2ms"', 'tokens_per_second = 50'],
        models: [['model-b', 'loaded']],
      },
    ],
    gateway: tenantsToml([
      { name: 'team-a', keys: [A_KEY] },
      { name: 'team-b', keys: [B_KEY] },
    ]),
  });
});

after(async () => {
  await rig?.close();
});

const auth = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

/** Streams a chat completion with the conversation header, and leaves once `atLeast` bytes came: what it got and from whom. */
async function startAndDrop(model: string, conv: string, atLeast: number): Promise<{ got: Buffer; node: string }> {
  const controller = new AbortController();
  const answer = await request(`${rig.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-conversation-id': conv, ...auth(A_KEY) },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'tell me a story' }], max_tokens: 40, stream: true }),
    signal: controller.signal,
  });
  assert.equal(answer.statusCode, 200);
  const got = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    answer.body.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const all = Buffer.concat(chunks);
      if (all.length >= atLeast) resolve(all);
    });
    answer.body.on('error', reject);
    answer.body.on('end', () => reject(new Error('the stream ended before the client left')));
  });
  answer.body.on('error', () => {});
  controller.abort();
  return { got, node: String(answer.headers['x-switchyard-node']) };
}

async function replay(conv: string, from: number, key = A_KEY): Promise<{ status: number; node: unknown; bytes: Buffer }> {
  const answer = await request(`${rig.gw.url}/v1/stream?conv_id=${encodeURIComponent(conv)}&from=${from}`, {
    headers: auth(key),
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  return {
    status: answer.statusCode,
    node: answer.headers['x-switchyard-node'],
    bytes: Buffer.from(await answer.body.arrayBuffer()),
  };
}

const streamRoutesAsked = async (): Promise<{ router: string; method: string; path: string }[]> =>
  (
    await Promise.all(
      ROUTERS.map(async (router) =>
        (await simRequests(rig.sim.url(router))).filter((r) => r.path.startsWith('/v1/stream')).map((r) => ({ router, ...r })),
      ),
    )
  ).flat();

test('a client that dropped mid-stream reattaches through the gateway from the bytes it got and gets every byte exactly once', async () => {
  const conv = 'conv-resume-1';
  const { got, node } = await startAndDrop('model-a', conv, 40);
  assert.equal(node, 'r1');
  const before = (await streamRoutesAsked()).length;
  const rest = await replay(conv, got.length);
  assert.equal(rest.status, 200, rest.bytes.toString());
  assert.equal(rest.node, 'r1');
  assert.ok(rest.bytes.length > 0, 'the router generated on after the client left');
  const whole = await replay(conv, 0);
  assert.equal(whole.status, 200);
  assert.equal(
    Buffer.compare(Buffer.concat([got, rest.bytes]), whole.bytes),
    0,
    'got + replay = the whole stream, byte for byte',
  );
  assert.match(whole.bytes.toString('utf8'), /^data: \{.*\n\n(data: .*\n\n)*data: \[DONE\]\n\n$/s);
  const asked = (await streamRoutesAsked()).slice(before);
  assert.deepEqual(
    asked.map((r) => `${r.router} ${r.method} ${r.path}`),
    ['r1 GET /v1/stream', 'r1 GET /v1/stream'],
    'only the owner was asked',
  );
});

test("another tenant's GET, DELETE and lookup look exactly like an unknown conversation's, and reach no router", async () => {
  const conv = 'conv-resume-2';
  await startAndDrop('model-a', conv, 1);
  const before = (await streamRoutesAsked()).length;
  const asB = await httpJson('GET', `${rig.gw.url}/v1/stream?conv_id=${conv}&from=0`, undefined, auth(B_KEY));
  const unknown = await httpJson('GET', `${rig.gw.url}/v1/stream?conv_id=conv-never&from=0`, undefined, auth(B_KEY));
  assert.equal(asB.status, 404);
  assert.equal(asB.text.replace(conv, 'ID'), unknown.text.replace('conv-never', 'ID'));
  assert.equal(asB.json<{ error: { code: string } }>().error.code, 'not_found');
  const deleteAsB = await httpJson('DELETE', `${rig.gw.url}/v1/stream?conv_id=${conv}`, undefined, auth(B_KEY));
  const deleteUnknown = await httpJson('DELETE', `${rig.gw.url}/v1/stream?conv_id=conv-never`, undefined, auth(B_KEY));
  assert.equal(deleteAsB.status, 404);
  assert.equal(deleteAsB.text.replace(conv, 'ID'), deleteUnknown.text.replace('conv-never', 'ID'));
  const lookupAsB = await httpJson('POST', `${rig.gw.url}/v1/streams/lookup`, { conversation_ids: [conv] }, auth(B_KEY));
  assert.equal(lookupAsB.status, 200);
  assert.deepEqual(lookupAsB.json(), []);
  assert.equal((await streamRoutesAsked()).length, before, 'no router was asked for another tenant');
  // B's DELETE stopped nothing: A's stream is still there.
  assert.equal((await replay(conv, 0)).status, 200);
});

test('a lookup over conversations on two routers asks each router for its own ids only; DELETE reaches the owner', async () => {
  const [one, two] = await Promise.all([startAndDrop('model-a', 'conv-look-1', 1), startAndDrop('model-b', 'conv-look-2', 1)]);
  assert.deepEqual([one.node, two.node], ['r1', 'r2']);
  const before = (await streamRoutesAsked()).length;
  const looked = await httpJson(
    'POST',
    `${rig.gw.url}/v1/streams/lookup`,
    { conversation_ids: ['conv-look-1', 'conv-unknown', 'conv-look-2'] },
    auth(A_KEY),
  );
  assert.equal(looked.status, 200, looked.text);
  const entries = looked.json<{ conversation_id: string; total_bytes: number }[]>();
  assert.deepEqual(
    entries.map((e) => e.conversation_id),
    ['conv-look-1', 'conv-look-2'],
  );
  assert.ok(entries.every((e) => e.total_bytes > 0));
  // The routers' own polls (GET /props, the listing) may fall between: only the stream routes count.
  const after = (await streamRoutesAsked()).slice(before);
  assert.deepEqual(after.map((r) => `${r.router} ${r.method} ${r.path}`).sort(), [
    'r1 POST /v1/streams/lookup',
    'r2 POST /v1/streams/lookup',
  ]);
  const stop = await httpJson('DELETE', `${rig.gw.url}/v1/stream?conv_id=conv-look-2`, undefined, auth(A_KEY));
  assert.equal(stop.status, 204);
  assert.equal(stop.headers['x-switchyard-node'], 'r2');
  const gone = await replay('conv-look-2', 0);
  assert.equal(gone.status, 404, 'the router forgot it: its own 404 passed on');
  assert.match(gone.bytes.toString(), /File Not Found/);
});

test('refused at the gateway: an unknown conversation (404), no conv_id, a from that is no byte offset (400)', async () => {
  const before = (await streamRoutesAsked()).length;
  const unknown = await httpJson('GET', `${rig.gw.url}/v1/stream?conv_id=nobody&from=0`, undefined, auth(A_KEY));
  assert.equal(unknown.status, 404);
  assert.match(unknown.json<{ error: { message: string } }>().error.message, /No stream for conversation 'nobody'/);
  const missing = await httpJson('GET', `${rig.gw.url}/v1/stream?from=0`, undefined, auth(A_KEY));
  assert.equal(missing.status, 400);
  assert.equal(missing.json<{ error: { param: string } }>().error.param, 'conv_id');
  const bad = await httpJson('GET', `${rig.gw.url}/v1/stream?conv_id=conv-resume-1&from=-3`, undefined, auth(A_KEY));
  assert.equal(bad.status, 400);
  assert.equal(bad.json<{ error: { param: string } }>().error.param, 'from');
  const notJson = await httpJson('POST', `${rig.gw.url}/v1/streams/lookup`, 'nope', auth(A_KEY));
  assert.equal(notJson.status, 400);
  const noKey = await httpJson('GET', `${rig.gw.url}/v1/stream?conv_id=conv-resume-1&from=0`);
  assert.equal(noKey.status, 401);
  assert.equal((await streamRoutesAsked()).length, before, 'no router was asked');
});

test("the stream routes never load a model: a conversation whose model was unloaded since is the router's 404, and it stays unloaded", async () => {
  const conv = 'conv-unloaded';
  await startAndDrop('model-a', conv, 1);
  // Wait for the stream to finish on the router, then unload its model there.
  assert.equal((await replay(conv, 0)).status, 200);
  const unloaded = await httpJson('POST', `${rig.sim.url('r1')}/models/unload`, { model: 'model-a' });
  assert.equal(unloaded.status, 200, unloaded.text);
  for (let i = 0; i < 200 && (await rig.routerStatus('model-a', 'r1')) !== 'unloaded'; i++)
    await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(await rig.routerStatus('model-a', 'r1'), 'unloaded');
  const before = (await simRequests(rig.sim.url('r1'))).length;
  const gone = await replay(conv, 0);
  assert.equal(gone.status, 404);
  assert.equal(gone.node, 'r1', "the router's own answer, passed on");
  const looked = await httpJson('POST', `${rig.gw.url}/v1/streams/lookup`, { conversation_ids: [conv] }, auth(A_KEY));
  assert.deepEqual(looked.json(), []);
  const asked = (await simRequests(rig.sim.url('r1'))).slice(before).map((r) => `${r.method} ${r.path}`);
  assert.deepEqual(
    // Every POST (a load, an inference) and every stream route the router saw since: only the two asked.
    asked.filter((line) => line.startsWith('POST') || line.includes('/v1/stream')),
    ['GET /v1/stream', 'POST /v1/streams/lookup'],
    'nothing but the stream routes: no load, no inference',
  );
  assert.equal(await rig.routerStatus('model-a', 'r1'), 'unloaded');
});

test("a client that leaves a live replay closes the gateway's connection to the router", async () => {
  // r2 serves model-b; a long answer keeps the replay live.
  const conv = 'conv-live-replay';
  const controller = new AbortController();
  const post = await request(`${rig.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-conversation-id': conv, ...auth(A_KEY) },
    body: JSON.stringify({ model: 'model-b', messages: [{ role: 'user', content: 'go' }], max_tokens: 400, stream: true }),
    signal: controller.signal,
  });
  post.body.on('error', () => {});
  await new Promise<void>((resolve) => post.body.once('data', () => resolve()));
  controller.abort();
  // The POST's connection is closed at the router (its generation goes on, detached) before the replay starts.
  const r2 = async (): Promise<{ inFlight: number; aborted: number }> => {
    const stats = await simStats(rig.sim.url('r2'));
    return { inFlight: stats['inFlight'] ?? -1, aborted: stats['clientAborted'] ?? -1 };
  };
  await untilEvent(
    async () => (await r2()).inFlight === 0,
    [rig.sim.activity('r2')],
    "the POST's connection closed at the router",
  );
  const before = await r2();
  const leaving = new AbortController();
  const replaying = await request(`${rig.gw.url}/v1/stream?conv_id=${conv}&from=0`, {
    headers: auth(A_KEY),
    signal: leaving.signal,
  });
  assert.equal(replaying.statusCode, 200);
  replaying.body.on('error', () => {});
  await new Promise<void>((resolve) => replaying.body.once('data', () => resolve()));
  assert.ok((await r2()).inFlight >= 1, 'the replay is open at the router');
  leaving.abort();
  await untilEvent(
    async () => {
      const now = await r2();
      return now.inFlight === 0 && now.aborted === before.aborted + 1;
    },
    [rig.sim.activity('r2')],
    'the router saw the replay closed',
  );
  // Stop the generation: DELETE reaches the owner.
  assert.equal((await httpJson('DELETE', `${rig.gw.url}/v1/stream?conv_id=${conv}`, undefined, auth(A_KEY))).status, 204);
});
