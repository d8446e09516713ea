// The proxy over the real wire: a `switchyard sim` process behind a `switchyard serve` process.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { httpJson, setSimFaults, simRequests, simStats } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

const FLEET = `
[[node]]
name = "a"
kind = "vllm"
models = ["shared"]
ttft = "5ms"
tokens_per_second = 500

[[node]]
name = "b"
kind = "vllm"
models = ["shared"]
ttft = "5ms"
tokens_per_second = 500

[[node]]
name = "slow"
kind = "llamacpp"
models = ["slow-model"]
ttft = "20ms"
tokens_per_second = 20
`;

let sim: SimFleet;
let gw: GatewayUnderTest;

before(async () => {
  sim = await startSimFleet(FLEET);
  gw = await startGateway(
    gatewayToml(
      sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: n.kind === 'llamacpp' ? 'llamacpp' : 'vllm' })),
      '[upstream]\nheaders_timeout = "1s"\n',
      'max_request_body_bytes = 4096',
    ),
  );
  await untilEvent(
    async () => {
      const health = (await httpJson('GET', `${gw.url}/health`)).json<{ models_ok: number; healthy: number }>();
      return health.models_ok === 3 && health.healthy === 3;
    },
    [nodeChanges(gw)],
    'every node healthy with known models',
  );
});

after(async () => {
  await gw?.close();
  await sim?.close();
});

const chat = (model: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model,
  messages: [{ role: 'user', content: 'hello there' }],
  ...extra,
});

test('a non-streaming answer passes through unchanged and names the node that served it', async () => {
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, chat('shared'));
  assert.equal(res.status, 200);
  assert.ok(['a', 'b'].includes(String(res.headers['x-switchyard-node'])));
  const body = res.json<{ object: string; choices: unknown[] }>();
  assert.equal(body.object, 'chat.completion');
});

test('streaming is not buffered: the first chunk arrives while the upstream is still generating', async () => {
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(chat('slow-model', { stream: true, max_tokens: 40 })),
    signal: AbortSignal.timeout(15_000),
  });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['x-switchyard-node'], 'slow');
  const iterator = res.body[Symbol.asyncIterator]();
  const first = await iterator.next();
  assert.ok(!first.done && String(first.value).startsWith('data: '));
  // 40 tokens at 20/s take ~2 s: the node must still be busy with this very request.
  const stats = await simStats(sim.url('slow'));
  assert.equal(stats.inFlight, 1, 'the upstream had not finished when the first chunk arrived');
  let rest = String(first.value);
  for await (const chunk of { [Symbol.asyncIterator]: () => iterator }) rest += String(chunk);
  assert.match(rest, /data: \[DONE\]/);
});

test('a failure before the first byte fails over to another node', async () => {
  // `hang` fails over once the upstream headers timeout (1 s here) expires.
  for (const fault of ['reset', 'error500', 'hang'] as const) {
    await setSimFaults(sim.url('a'), { inference: fault });
    try {
      const served: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, chat('shared'));
        assert.equal(res.status, 200, `fault ${fault}: ${res.text}`);
        served.push(String(res.headers['x-switchyard-node']));
      }
      assert.deepEqual([...new Set(served)], ['b'], `fault ${fault}`);
    } finally {
      await setSimFaults(sim.url('a'), { inference: 'none' });
    }
  }
  const asked = (await simRequests(sim.url('a'))).filter((r) => r.path === '/v1/chat/completions');
  assert.ok(asked.length >= 3, 'node a was really attempted');
});

test('a mid-stream reset ends the client stream cleanly, without an invented [DONE]', async () => {
  await setSimFaults(sim.url('slow'), { inference: 'midstream_reset', midstreamAfterChunks: 3 });
  try {
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chat('slow-model', { stream: true, max_tokens: 20 })),
      signal: AbortSignal.timeout(15_000),
    });
    assert.equal(res.statusCode, 200);
    const text = await res.body.text(); // rejects if the gateway broke the connection instead of ending
    assert.match(text, /^data: /);
    assert.doesNotMatch(text, /\[DONE\]/);
  } finally {
    await setSimFaults(sim.url('slow'), { inference: 'none' });
  }
  const metrics = (await httpJson('GET', `${gw.url}/metrics`)).text;
  assert.match(metrics, /gateway_upstream_attempts_total\{node="slow",result="stream_error"\} [1-9]/);
});

test('a client that disconnects mid-stream makes the gateway abort the upstream request', async () => {
  const before = (await simStats(sim.url('slow'))).clientAborted ?? 0;
  const controller = new AbortController();
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(chat('slow-model', { stream: true, max_tokens: 200 })),
    signal: controller.signal,
  });
  const iterator = res.body[Symbol.asyncIterator]();
  await iterator.next();
  controller.abort();
  await untilEvent(
    async () => ((await simStats(sim.url('slow'))).clientAborted ?? 0) > before,
    [sim.activity('slow')],
    'the node to see its client go',
  );
  await untilEvent(
    async () => (await simStats(sim.url('slow'))).inFlight === 0,
    [sim.activity('slow')],
    'the node to stop generating',
  );
});

test('a body over max_request_body_bytes gets 413 in the OpenAI error shape', async () => {
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, chat('shared', { pad: 'x'.repeat(20_000) }));
  assert.equal(res.status, 413);
  const { error } = res.json<{ error: Record<string, unknown> }>();
  assert.deepEqual(Object.keys(error).slice(0, 4), ['message', 'type', 'param', 'code']);
  assert.equal(error.type, 'invalid_request_error');
});

test('malformed JSON gets 400, an unknown route 404, both OpenAI-shaped', async () => {
  const bad = await httpJson('POST', `${gw.url}/v1/chat/completions`, '{"model": "shared", "messages": [');
  assert.equal(bad.status, 400);
  assert.match(String(bad.json<{ error: { message: string } }>().error.message), /not valid JSON/);
  const missing = await httpJson('GET', `${gw.url}/v1/nope`);
  assert.equal(missing.status, 404);
  assert.equal(missing.json<{ error: { type: string } }>().error.type, 'invalid_request_error');
});

test('a model no node lists, every listing current, gets 404 model_not_found naming the closest served models', async () => {
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, chat('shraed'));
  assert.equal(res.status, 404);
  assert.equal(res.headers['retry-after'], undefined);
  const { error } = res.json<{
    error: { message: string; type: string; param: string; code: string; closest_models: string[] };
  }>();
  assert.equal(error.code, 'model_not_found');
  assert.equal(error.type, 'invalid_request_error');
  assert.equal(error.param, 'model');
  assert.deepEqual(error.closest_models, ['shared', 'slow-model']);
  assert.match(
    error.message,
    /The model 'shraed' does not exist: no node serves it\. Closest served models: shared, slow-model\./,
  );
});

test('a node failing health checks goes degraded, then dead, then recovers on one success', async () => {
  const statusOf = async (): Promise<string> =>
    (await httpJson('GET', `${gw.url}/health`))
      .json<{ details: { name: string; status: string }[] }>()
      .details.find((d) => d.name === 'b')?.status ?? '';
  await setSimFaults(sim.url('b'), { health: 'fail' });
  try {
    await untilEvent(
      async () => (await statusOf()) === 'degraded' || (await statusOf()) === 'dead',
      [nodeChanges(gw)],
      'b degraded',
    );
    await untilEvent(async () => (await statusOf()) === 'dead', [nodeChanges(gw)], 'b dead');
    for (let i = 0; i < 3; i++) {
      const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, chat('shared'));
      assert.equal(res.headers['x-switchyard-node'], 'a', 'dead nodes are not routed to');
    }
  } finally {
    await setSimFaults(sim.url('b'), { health: 'none' });
  }
  await untilEvent(async () => (await statusOf()) === 'healthy', [nodeChanges(gw)], 'b healthy again');
  const messages = gw
    .logs()
    .filter((l) => l.node === 'b')
    .map((l) => l.msg);
  assert.ok(
    messages.includes('node degraded') && messages.includes('node dead') && messages.includes('node recovered'),
    messages.join(','),
  );
});
