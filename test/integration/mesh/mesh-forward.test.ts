// Cross-site forwarding over the real wire, in one process: gateway B forwards what its own nodes
// cannot serve to gateway A (a fake sites source stands in for the mesh's site store, pointing at
// A's url), signed as site B; A verifies the signature instead of a client key, serves from its
// own nodes only and never forwards again.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KeyObject } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodePinnedKey, localReplayGuard, signForward, verifyForward, type MeshLink } from '#src/mesh/forwarding/index.ts';
import type { RemoteModel, RemoteSiteView } from '#src/routing/index.ts';
import type { SiteKey } from '#src/mesh/site-key.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { httpJson, setSimFaults, type JsonResponse } from '#test/fixtures/http.ts';
import { chatBody, metricValue } from '#test/fixtures/gateway-state.ts';
import { chatOfTokens, unusedPort } from '#test/fixtures/context.ts';
import { startRecordingUpstream, type RecordingUpstream } from '#test/fixtures/recording-upstream.ts';
import { testSiteKey } from '#test/fixtures/site-keys.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

const FLEET_A = `
[[node]]
name = "a-small"
kind = "llamacpp"
models = ["only-a"]
context = 4096
ttft = "2ms"
tokens_per_second = 1000

[[node]]
name = "a-big"
kind = "llamacpp"
models = ["shared"]
context = 16384
ttft = "2ms"
tokens_per_second = 1000
`;

const FLEET_B = `
[[node]]
name = "b-small"
kind = "llamacpp"
models = ["shared"]
context = 1024
ttft = "2ms"
tokens_per_second = 1000

[[node]]
name = "b-local"
kind = "llamacpp"
models = ["local-b"]
context = 4096
ttft = "2ms"
tokens_per_second = 1000
`;

const KEY_A = 'client-key-a';
const KEY_B = 'client-key-b';
const keyA = testSiteKey();
const keyB = testSiteKey();
const keyStranger = testSiteKey();

/** What each gateway's fake site store says right now; tests rewrite it. */
let sitesSeenByA: RemoteSiteView[] = [];
let sitesSeenByB: RemoteSiteView[] = [];

function link(site: string, key: SiteKey, pins: [string, SiteKey][], sites: () => RemoteSiteView[], url: () => string): MeshLink {
  const pinned: Map<string, KeyObject> = new Map(pins.map(([id, k]) => [id, decodePinnedKey(k.publicKey)]));
  return {
    site,
    url,
    key: () => key,
    source: { sites },
    pins: () => pinned,
    maxClockSkewMs: () => 30_000,
    replay: localReplayGuard(() => Date.now(), { sinceMs: 0 }),
  };
}

function view(
  id: string,
  url: string,
  models: Record<string, Partial<RemoteModel>>,
  over: Partial<RemoteSiteView> = {},
): RemoteSiteView {
  const map = new Map(Object.entries(models).map(([m, v]) => [m, { ctx: v.ctx, onDemand: v.onDemand ?? false }]));
  return { id, url, fresh: true, load: 0, models: map, ...over };
}

let simA: SimFleet;
let simB: SimFleet;
let gwA: GatewayUnderTest;
let gwB: GatewayUnderTest;
let recorder: RecordingUpstream;

const nodesOf = (sim: SimFleet) => sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: 'llamacpp' }));
const withKey = (key: string) => ({ authorization: `Bearer ${key}` });
const post = (gw: GatewayUnderTest, body: unknown, headers: Record<string, string>): Promise<JsonResponse> =>
  httpJson('POST', `${gw.url}/v1/chat/completions`, body, headers);
const header = (res: JsonResponse, name: string): string | undefined => {
  const value = res.headers[name];
  return typeof value === 'string' ? value : undefined;
};
const metricOf = async (gw: GatewayUnderTest, name: string, labels: Record<string, string>): Promise<number> =>
  metricValue(await gw.metrics(), name, labels);

before(async () => {
  [simA, simB, recorder] = await Promise.all([startSimFleet(FLEET_A), startSimFleet(FLEET_B), startRecordingUpstream([])]);
  gwA = await startGateway(gatewayToml(nodesOf(simA), '', 'api_keys = ["env:CLIENT_KEY"]'), {
    env: { CLIENT_KEY: KEY_A },
    mesh: link(
      'a',
      keyA,
      [['b', keyB]],
      () => sitesSeenByA,
      () => gwA.url,
    ),
  });
  gwB = await startGateway(gatewayToml(nodesOf(simB), '', 'api_keys = ["env:CLIENT_KEY"]'), {
    env: { CLIENT_KEY: KEY_B },
    mesh: link(
      'b',
      keyB,
      [['a', keyA]],
      () => sitesSeenByB,
      () => gwB.url,
    ),
  });
  sitesSeenByB = [view('a', gwA.url, { 'only-a': { ctx: 4096 }, shared: { ctx: 16384 } })];
  // Both fleets listed and sized before any forwarding is judged.
  await untilEvent(
    async () => (await post(gwA, chatBody('only-a'), withKey(KEY_A))).status === 200,
    [nodeChanges(gwA)],
    'A serves only-a',
  );
  await untilEvent(
    async () => (await post(gwA, chatBody('shared'), withKey(KEY_A))).status === 200,
    [nodeChanges(gwA)],
    'A serves shared',
  );
  await untilEvent(
    async () => (await post(gwB, chatBody('local-b'), withKey(KEY_B))).status === 200,
    [nodeChanges(gwB)],
    'B serves local-b',
  );
});

after(async () => {
  await Promise.all([gwA?.close(), gwB?.close()]);
  await Promise.all([simA?.close(), simB?.close(), recorder?.close()]);
});

test('a model only site A serves is answered through B (JSON), authenticated at A by the signature', async () => {
  const before = await metricOf(gwA, 'gateway_mesh_forwarded_in_total', { site: 'b', result: 'accepted' });
  const res = await post(gwB, chatBody('only-a'), withKey(KEY_B));
  assert.equal(res.status, 200, res.text);
  assert.equal(header(res, 'x-switchyard-site'), 'a');
  assert.equal(header(res, 'x-switchyard-node'), 'a-small');
  assert.equal(res.json<{ object: string }>().object, 'chat.completion');
  assert.equal(await metricOf(gwA, 'gateway_mesh_forwarded_in_total', { site: 'b', result: 'accepted' }), before + 1);
  assert.ok((await metricOf(gwB, 'gateway_mesh_forwarded_total', { site: 'a', result: 'success' })) >= 1);
});

test('a streamed answer comes through the forward as an event stream', async () => {
  const res = await post(gwB, chatBody('only-a', { stream: true }), withKey(KEY_B));
  assert.equal(res.status, 200, res.text);
  assert.match(header(res, 'content-type') ?? '', /^text\/event-stream/);
  assert.equal(header(res, 'x-switchyard-site'), 'a');
  assert.match(res.text, /^data: /m);
  assert.match(res.text, /data: \[DONE\]/);
});

test('Anthropic Messages are forwarded like the others: /v1/messages streamed and count_tokens, keyed by x-api-key (#24)', async () => {
  const messages = { model: 'only-a', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] };
  const res = await httpJson(
    'POST',
    `${gwB.url}/v1/messages`,
    { ...messages, stream: true },
    { 'x-api-key': KEY_B, 'anthropic-version': '2023-06-01' },
  );
  assert.equal(res.status, 200, res.text);
  assert.equal(header(res, 'x-switchyard-site'), 'a');
  assert.match(res.text, /^event: message_start\n/);
  assert.match(res.text, /event: message_stop\n/);
  const counted = await httpJson(
    'POST',
    `${gwB.url}/v1/messages/count_tokens`,
    { model: 'only-a', messages: messages.messages },
    { 'x-api-key': KEY_B },
  );
  assert.equal(counted.status, 200, counted.text);
  assert.equal(header(counted, 'x-switchyard-site'), 'a');
  assert.ok(counted.json<{ input_tokens: number }>().input_tokens > 0);
});

test('client credentials never leave the site; the forward carries the agreed signature', async () => {
  sitesSeenByB = [view('rec', recorder.url, { 'rec-model': {} })];
  try {
    // A client's own tenant header is no claim: the forward states the request's tenant (B's api_keys: `default`).
    const res = await post(gwB, chatBody('rec-model'), {
      ...withKey(KEY_B),
      'x-api-key': KEY_B,
      cookie: 'session=secret',
      'x-switchyard-tenant': '"root";class=interactive',
    });
    assert.equal(res.status, 200, res.text);
    const head = recorder.heads.at(-1);
    assert.ok(head !== undefined);
    assert.equal(head.headers.authorization, undefined);
    assert.equal(head.headers['x-api-key'], undefined);
    assert.equal(head.headers.cookie, undefined);
    assert.equal(head.headers['x-switchyard-forwarded-by'], 'b');
    assert.equal(head.headers['x-switchyard-tenant'], '"default";class=standard');
    assert.match(
      String(head.headers['signature-input']),
      /^sy=\("@method" "@authority" "@path" "@query" "content-digest" "x-switchyard-forwarded-by" "x-switchyard-tenant"\);created=\d+;expires=\d+;nonce="[A-Za-z0-9_-]{22}";keyid="b";alg="ed25519"$/,
    );
    const target = head.target;
    const context = {
      pins: new Map([['b', decodePinnedKey(keyB.publicKey)]]),
      nowMs: Date.now(),
      maxClockSkewMs: 30_000,
      self: 'rec',
      selfKey: undefined,
      url: recorder.url,
      replay: localReplayGuard(() => Date.now(), { sinceMs: 0 }),
    };
    const verdict = await verifyForward({ method: head.method, target, headers: head.headers }, context);
    assert.deepEqual(verdict.ok ? [verdict.site, verdict.tenant] : verdict, ['b', { name: 'default', priority: 'standard' }]);
  } finally {
    sitesSeenByB = [view('a', gwA.url, { 'only-a': { ctx: 4096 }, shared: { ctx: 16384 } })];
  }
});

test('a prompt too long for every local node goes to the site whose context fits it', async () => {
  const port = await unusedPort();
  sitesSeenByB = [
    view('tight', `http://127.0.0.1:${port}`, { shared: { ctx: 2048 } }),
    view('a', gwA.url, { shared: { ctx: 16384 } }, { load: 5 }),
  ];
  try {
    const res = await post(gwB, chatOfTokens('shared', 3000, { max_tokens: 8 }), withKey(KEY_B));
    assert.equal(res.status, 200, res.text);
    assert.equal(header(res, 'x-switchyard-site'), 'a');
    assert.equal(header(res, 'x-switchyard-node'), 'a-big');
    const explained = await gwB.explain('model=shared&prompt_tokens=3000&max_tokens=8');
    assert.equal(explained.outcome, 'forward');
    assert.equal(explained.site_choice, 'a');
    assert.deepEqual(
      explained.sites?.map((s) => [s.site, s.verdict, s.reason]),
      [
        ['tight', 'excluded', 'too_small'],
        ['a', 'eligible', undefined],
      ],
    );
  } finally {
    sitesSeenByB = [view('a', gwA.url, { 'only-a': { ctx: 4096 }, shared: { ctx: 16384 } })];
  }
});

test('with no local copy to count on, a site is judged by a typical token estimate, not the loose byte bound', async () => {
  // 3000 sim tokens are 15,000 bytes: the byte bound (15,000+) would call a 4096 context too small.
  const res = await post(gwB, chatOfTokens('only-a', 3000, { max_tokens: 8 }), withKey(KEY_B));
  assert.equal(res.status, 200, res.text);
  assert.equal(header(res, 'x-switchyard-site'), 'a');
  // Far too long for any copy: refused by B's own judgement, without asking A.
  const accepted = await metricOf(gwA, 'gateway_mesh_forwarded_in_total', { site: 'b', result: 'accepted' });
  const hopeless = await post(gwB, chatOfTokens('only-a', 5000, { max_tokens: 8 }), withKey(KEY_B));
  assert.equal(hopeless.status, 503, hopeless.text);
  assert.equal(hopeless.json<{ error: { sites?: { reason: string }[] } }>().error.sites?.[0]?.reason, 'too_small');
  assert.equal(await metricOf(gwA, 'gateway_mesh_forwarded_in_total', { site: 'b', result: 'accepted' }), accepted);
});

test('a site that fails before answering is failed over, then skipped while it backs off', async () => {
  const port = await unusedPort();
  sitesSeenByB = [
    view('gone', `http://127.0.0.1:${port}`, { 'only-a': {} }, { load: 0 }),
    view('a', gwA.url, { 'only-a': {} }, { load: 1 }),
  ];
  try {
    const first = await post(gwB, chatBody('only-a'), withKey(KEY_B));
    assert.equal(first.status, 200, first.text);
    assert.equal(header(first, 'x-switchyard-site'), 'a');
    assert.equal(await metricOf(gwB, 'gateway_mesh_forwarded_total', { site: 'gone', result: 'connect_error' }), 1);
    const second = await post(gwB, chatBody('only-a'), withKey(KEY_B));
    assert.equal(second.status, 200, second.text);
    assert.equal(
      await metricOf(gwB, 'gateway_mesh_forwarded_total', { site: 'gone', result: 'connect_error' }),
      1,
      'not tried again while backing off',
    );
    const explained = await gwB.explain('model=only-a');
    assert.equal(explained.sites?.find((s) => s.site === 'gone')?.reason, 'unreachable');
    const logged = gwB.logs().filter((l) => l.site === 'gone' && String(l.msg).startsWith('remote site unreachable'));
    assert.equal(logged.length, 1, 'one line for the transition');
  } finally {
    sitesSeenByB = [view('a', gwA.url, { 'only-a': { ctx: 4096 }, shared: { ctx: 16384 } })];
  }
});

test('a loop A <-> B ends after one hop: A serves forwarded requests locally only', async () => {
  sitesSeenByA = [view('b', gwB.url, { ghost: {} })];
  sitesSeenByB = [view('a', gwA.url, { ghost: {} })];
  try {
    const acceptedAtA = await metricOf(gwA, 'gateway_mesh_forwarded_in_total', { site: 'b', result: 'accepted' });
    const res = await post(gwB, chatBody('ghost'), withKey(KEY_B));
    assert.equal(res.status, 503, res.text);
    // A's refusal (its sites: b forwarded) is told in B's words: a was tried and refused it.
    const error = res.json<{ error: { sites?: { site: string; reason: string; detail?: string }[] } }>().error;
    assert.deepEqual(
      error.sites?.map((s) => [s.site, s.reason, s.detail]),
      [['a', 'refused', 'answered 503 no_healthy_node']],
    );
    assert.equal(await metricOf(gwA, 'gateway_mesh_forwarded_in_total', { site: 'b', result: 'accepted' }), acceptedAtA + 1);
    assert.doesNotMatch(await gwA.metrics(), /^gateway_mesh_forwarded_total\{/m, 'A never forwarded anything');
  } finally {
    sitesSeenByA = [];
    sitesSeenByB = [view('a', gwA.url, { 'only-a': { ctx: 4096 }, shared: { ctx: 16384 } })];
  }
});

test('unsigned, unknown, wrongly signed and tampered forwarded requests get 401 naming the problem', async () => {
  const body = Buffer.from(JSON.stringify(chatBody('only-a')));
  const url = `${gwA.url}/v1/chat/completions`;
  const signedBy = (site: string, key: SiteKey, signedBody: Buffer = body) =>
    signForward({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      body: signedBody,
      site,
      key,
      nowMs: Date.now(),
      lifetimeMs: 30_000,
    });
  const cases: [string, Record<string, string>, string][] = [
    ['only the forwarded-by header', { 'x-switchyard-forwarded-by': 'b' }, 'unsigned'],
    ['a site A does not pin', await signedBy('z', keyStranger), 'unknown_site'],
    ['signed by another key for b', await signedBy('b', keyStranger), 'bad_signature'],
    [
      'a body other than the signed one',
      await signedBy('b', keyB, Buffer.from('{"model":"only-a","messages":[]}')),
      'digest_mismatch',
    ],
    // Client keys are no way around it: a signature claim is judged first.
    ['a valid client key but no signature', { ...withKey(KEY_A), 'x-switchyard-forwarded-by': 'b' }, 'unsigned'],
  ];
  for (const [name, headers, code] of cases) {
    const res = await httpJson('POST', url, body, { 'content-type': 'application/json', ...headers });
    assert.equal(res.status, 401, `${name}: ${res.text}`);
    assert.equal(res.json<{ error: { code: string; type: string } }>().error.code, code, name);
  }
  assert.ok((await metricOf(gwA, 'gateway_mesh_forwarded_in_total', { site: 'b', result: 'bad_signature' })) >= 1);
  assert.ok((await metricOf(gwA, 'gateway_mesh_forwarded_in_total', { site: '_unknown', result: 'unknown_site' })) >= 1);
  const refusals = gwA.logs().filter((l) => String(l.msg).startsWith('forwarded request refused'));
  assert.deepEqual(refusals.map((l) => `${String(l.site)} ${String(l.reason)}`).sort(), [
    '_unknown unknown_site',
    'b bad_signature',
    'b digest_mismatch',
    'b unsigned',
  ]);
});

test('a site answering 5xx before anything reached the client is failed over and backs off', async () => {
  const failing = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"busy"}}'));
  });
  await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
  const { port } = failing.address() as AddressInfo;
  sitesSeenByB = [
    view('sick', `http://127.0.0.1:${port}`, { 'only-a': {} }, { load: 0 }),
    view('a', gwA.url, { 'only-a': {} }, { load: 1 }),
  ];
  try {
    const res = await post(gwB, chatBody('only-a'), withKey(KEY_B));
    assert.equal(res.status, 200, res.text);
    assert.equal(header(res, 'x-switchyard-site'), 'a');
    assert.equal(await metricOf(gwB, 'gateway_mesh_forwarded_total', { site: 'sick', result: 'http_5xx' }), 1);
    assert.equal((await gwB.explain('model=only-a')).sites?.find((s) => s.site === 'sick')?.reason, 'unreachable');
  } finally {
    sitesSeenByB = [view('a', gwA.url, { 'only-a': { ctx: 4096 }, shared: { ctx: 16384 } })];
    failing.closeAllConnections();
    await new Promise<void>((resolve) => failing.close(() => resolve()));
  }
});

test('a gateway without [mesh] refuses a request claiming to be forwarded, whatever client key it carries', async () => {
  const alone = await startGateway(gatewayToml(nodesOf(simA), '', 'api_keys = ["env:CLIENT_KEY"]'), {
    env: { CLIENT_KEY: KEY_A },
  });
  try {
    const res = await post(alone, chatBody('only-a'), { ...withKey(KEY_A), 'x-switchyard-forwarded-by': 'b' });
    assert.equal(res.status, 401, res.text);
    assert.equal(res.json<{ error: { code: string } }>().error.code, 'unknown_site');
    // A client's own Signature header means nothing to a gateway that is not a site.
    await untilEvent(
      async () => (await post(alone, chatBody('only-a'), { ...withKey(KEY_A), signature: 'x=:AA==:' })).status === 200,
      [nodeChanges(alone)],
      'served alone',
    );
  } finally {
    await alone.close();
  }
});

test('GET /v1/models lists fresh remote models marked with their site, never stale ones', async () => {
  sitesSeenByB = [
    view('a', gwA.url, { 'only-a': { ctx: 4096 }, shared: { ctx: 16384 } }),
    view('old', gwA.url, { 'stale-model': {} }, { fresh: false }),
  ];
  try {
    const res = await httpJson('GET', `${gwB.url}/v1/models`, undefined, withKey(KEY_B));
    const data = res.json<{
      data: { id: string; owned_by: string; max_model_len: number | null; switchyard?: { site: string } }[];
    }>().data;
    const byId = new Map(data.map((m) => [m.id, m]));
    assert.equal(byId.get('only-a')?.owned_by, 'switchyard:a');
    assert.deepEqual(byId.get('only-a')?.switchyard?.site, 'a');
    assert.equal(byId.get('only-a')?.max_model_len, 4096);
    assert.equal(byId.get('shared')?.owned_by, 'switchyard', 'served locally: the local entry stays');
    assert.equal(byId.has('stale-model'), false);
  } finally {
    sitesSeenByB = [view('a', gwA.url, { 'only-a': { ctx: 4096 }, shared: { ctx: 16384 } })];
  }
});

test('a site stale beyond memory lends no model to the 404 rule; a fresh one that fails is listed with its real failure in the 503', async () => {
  sitesSeenByB = [view('a', gwA.url, { 'only-a': {} }, { fresh: false, remembered: false })];
  try {
    const stale = await post(gwB, chatBody('only-a'), withKey(KEY_B));
    assert.equal(stale.status, 404, stale.text);
    const port = await unusedPort();
    sitesSeenByB = [
      view('a', `http://127.0.0.1:${port}`, { 'only-a': {} }),
      view('old', gwA.url, { 'only-a': {} }, { fresh: false }),
    ];
    const down = await post(gwB, chatBody('only-a'), withKey(KEY_B));
    assert.equal(down.status, 503, down.text);
    const error = down.json<{ error: { message: string; sites?: { site: string; reason: string; detail?: string }[] } }>().error;
    assert.deepEqual(
      error.sites?.map((s) => [s.site, s.reason]),
      [
        ['a', 'unreachable'],
        ['old', 'stale'],
      ],
    );
    assert.match(error.sites?.[0]?.detail ?? '', /ECONNREFUSED/);
    assert.match(error.message, /remote sites: a unreachable, old stale/);
  } finally {
    sitesSeenByB = [view('a', gwA.url, { 'only-a': { ctx: 4096 }, shared: { ctx: 16384 } })];
  }
});

test('a local node that fails before its first byte is failed over to a site in the same loop; both failing is one 502 naming each', async () => {
  const bSmall = simB.url('b-small');
  await setSimFaults(bSmall, { inference: 'reset' });
  // A under another id: the tests before may have left 'a' backing off.
  sitesSeenByB = [view('a-too', gwA.url, { shared: { ctx: 16384 } })];
  try {
    const resets = await metricOf(gwB, 'gateway_upstream_attempts_total', { node: 'b-small', result: 'reset' });
    const res = await post(gwB, chatBody('shared'), withKey(KEY_B));
    assert.equal(res.status, 200, res.text);
    assert.equal(header(res, 'x-switchyard-site'), 'a-too');
    assert.equal(header(res, 'x-switchyard-node'), 'a-big');
    assert.equal(
      await metricOf(gwB, 'gateway_upstream_attempts_total', { node: 'b-small', result: 'reset' }),
      resets + 1,
      'the local node was tried first',
    );
    assert.equal(await metricOf(gwB, 'gateway_mesh_forwarded_total', { site: 'a-too', result: 'success' }), 1);
    const port = await unusedPort();
    sitesSeenByB = [
      view('down', `http://127.0.0.1:${port}`, { shared: {} }),
      view('old', gwA.url, { shared: {} }, { fresh: false }),
    ];
    const failed = await post(gwB, chatBody('shared'), withKey(KEY_B));
    assert.equal(failed.status, 502, failed.text);
    const error = failed.json<{ error: { code: string; message: string } }>().error;
    assert.equal(error.code, 'upstream_failed');
    assert.match(error.message, /b-small: .*; site:down: ECONNREFUSED/, 'one list of failures, the node first, then the site');
  } finally {
    await setSimFaults(bSmall, { inference: 'none' });
    sitesSeenByB = [view('a', gwA.url, { 'only-a': { ctx: 4096 }, shared: { ctx: 16384 } })];
  }
});

test('a 5xx from the last local node is failed over to a fresh site that serves the model; with no site for it, the node’s answer is passed on', async () => {
  const bSmall = simB.url('b-small');
  await setSimFaults(bSmall, { inference: 'error500' });
  sitesSeenByB = [view('a-5xx', gwA.url, { shared: { ctx: 16384 } })];
  try {
    const before500 = await metricOf(gwB, 'gateway_upstream_attempts_total', { node: 'b-small', result: 'http_5xx' });
    const res = await post(gwB, chatBody('shared'), withKey(KEY_B));
    assert.equal(res.status, 200, res.text);
    assert.equal(header(res, 'x-switchyard-site'), 'a-5xx', 'the site took over from the failing node');
    assert.equal(
      await metricOf(gwB, 'gateway_upstream_attempts_total', { node: 'b-small', result: 'http_5xx' }),
      before500 + 1,
      'the local node was tried first',
    );
    // No fresh site serves the model: nothing to fail over to, so the client gets the node's own 500.
    sitesSeenByB = [view('old-5xx', gwA.url, { shared: {} }, { fresh: false })];
    const passed = await post(gwB, chatBody('shared'), withKey(KEY_B));
    assert.equal(passed.status, 500, passed.text);
    assert.equal(header(passed, 'x-switchyard-node'), 'b-small');
  } finally {
    await setSimFaults(bSmall, { inference: 'none' });
    sitesSeenByB = [view('a', gwA.url, { 'only-a': { ctx: 4096 }, shared: { ctx: 16384 } })];
  }
});
