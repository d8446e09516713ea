// Issue 24, Ollama's native API: its NDJSON stream (`application/x-ndjson`, one object a line,
// `done: true` last) was no answer the gateway passed on ("not JSON or an event stream"), and the
// counts Ollama states on its final object (`prompt_eval_count`, `eval_count`) settled no tenant's
// tokens. Now the stream reaches the client byte for byte — the node's own bytes, however it
// splits and spaces them — with only the model's value rewritten in the request; the tenant's
// tokens settle from the final object, streamed or whole; and a node that fails before the first
// byte is failed over.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { Ollama } from 'ollama';
import { startScriptedNode, writeInTurn, type InferenceScript } from '#test/fixtures/scripted-node.ts';
import { startInProcessGateway } from '#test/fixtures/in-process.ts';
import { startFleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { httpJson, setSimFaults } from '#test/fixtures/http.ts';
import { requestEnds, untilListed } from '#test/fixtures/gateway-waits.ts';
import { untilEvent } from '#test/fixtures/events.ts';

/** Ollama's chat stream in the node's own spelling (key order, a space, an escape), cut mid-line across writes. */
const STREAM = [
  '{"model":"m","created_at":"2026-12-02T02:00:00.000000001Z","message":{"role":"assistant","content":"Hel"},"done":false}\n{"model":"m",',
  '"created_at":"2026-12-02T02:00:00.1Z","message":{"role":"assistant","content":"lo \\u00e9"},"done":false}\n',
  '{"model":"m","created_at":"2026-12-02T02:00:00.2Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":12345678901,"load_duration":1,"prompt_eval_count":26,"prompt_eval_duration":2,"eval_count":3,"eval_duration":3}\n',
];
const WHOLE =
  '{"model":"m","created_at":"2026-12-02T02:00:01Z","response":"Hi.","done":true,"done_reason":"stop","context":[1,2],"total_duration":5,"load_duration":1,"prompt_eval_count":11,"prompt_eval_duration":1,"eval_count":2,"eval_duration":1}';

const KEY = 'sk-ollama-user';

test('an NDJSON stream passes byte for byte, and the tenant’s tokens settle from the final object', async () => {
  const seen: string[] = [];
  const script: InferenceScript = (req, res, body) => {
    seen.push(body.toString('utf8'));
    if (req.url === '/api/generate') {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(WHOLE);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    writeInTurn(res, STREAM);
  };
  const node = await startScriptedNode(script);
  const toml = [
    '[server]\nlisten = "127.0.0.1:0"\ndrain_timeout = "0s"',
    '[health]\ninterval = "1s"',
    `[[tenants]]\nname = "webui"\nkeys = ["${KEY}"]`,
    '[models]\n[[models.available]]\nname = "m"\naliases = ["llama3"]',
    // An Ollama-compatible proxy: the operator says it serves the native routes.
    `[[nodes]]\nname = "proxy"\nurl = "${node.url}"\nkind = "openai"\nendpoints = ["/api/chat", "/api/generate"]`,
  ].join('\n');
  let gw: Awaited<ReturnType<typeof startInProcessGateway>> | undefined;
  try {
    gw = await startInProcessGateway(toml);
    assert.ok(await gw.gateway.firstRoundDone(15_000));
    // The client's bytes: odd spacing and a big integer the gateway must not re-serialise; stream by default.
    const sent =
      '{ "model" : "llama3", "options": {"seed": 12345678901234567890},\n "messages": [{"role": "user", "content": "hi"}] }';
    const res = await request(`${gw.url}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: sent,
      signal: AbortSignal.timeout(20_000),
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/x-ndjson');
    assert.equal(res.headers['x-switchyard-node'], 'proxy');
    const received = Buffer.from(await res.body.arrayBuffer()).toString('utf8');
    assert.equal(received, STREAM.join(''), 'byte for byte what the node sent');
    assert.equal(seen[0], sent.replace('"llama3"', '"m"'), 'only the model value rewritten');

    // The unchanged client reads a whole answer (stream: false) through the same gateway.
    const client = new Ollama({ host: gw.url, headers: { Authorization: `Bearer ${KEY}` } });
    const generated = await client.generate({ model: 'llama3', prompt: 'hello', stream: false });
    assert.equal(generated.response, 'Hi.');

    const url = gw.url;
    const today = async (): Promise<{ requests: number; promptTokens: number; completionTokens: number } | undefined> =>
      (await httpJson('GET', `${url}/admin/tenants`))
        .json<{ tenants: { name: string; today: { requests: number; promptTokens: number; completionTokens: number } }[] }>()
        .tenants.find((t) => t.name === 'webui')?.today;
    await untilEvent(async () => (await today())?.requests === 2, [requestEnds(gw)], 'both requests settled');
    const settled = await today();
    assert.equal(settled?.promptTokens, 26 + 11, 'prompt_eval_count of the stream’s final object and of the whole answer');
    assert.equal(settled?.completionTokens, 3 + 2, 'eval_count likewise');
  } finally {
    await gw?.close();
    await node.close();
  }
});

const FLEET = `
[[node]]
name = "a-broken"
kind = "ollama"
ttft = "5ms"
tokens_per_second = 400
models = ["llama3:latest"]

[[node]]
name = "b-good"
kind = "ollama"
ttft = "5ms"
tokens_per_second = 400
models = ["llama3:latest"]
`;

test('a node that fails before the first byte is failed over; the client gets the other’s stream', async () => {
  const env = await startFleetAndGateway(FLEET, (sim) =>
    [
      '[server]\nlisten = "127.0.0.1:0"\ndrain_timeout = "0s"',
      '[health]\ninterval = "200ms"',
      '[discovery]\ninterval = "300ms"',
      ...sim.nodes.map((n) => `[[nodes]]\nname = "${n.name}"\nurl = "${n.url}"\nkind = "ollama"`),
    ].join('\n'),
  );
  try {
    await untilListed(env.gw, 2, 'both nodes listed');
    await setSimFaults(env.sim.url('a-broken'), { inference: 'error500' });
    for (let i = 0; i < 4; i++) {
      const res = await request(`${env.gw.url}/api/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'llama3', messages: [{ role: 'user', content: `hi ${i}` }], options: { num_predict: 3 } }),
        signal: AbortSignal.timeout(20_000),
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['x-switchyard-node'], 'b-good');
      const lines = (await res.body.text())
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { done: boolean });
      assert.equal(lines.at(-1)?.done, true);
      assert.equal(lines.length, 4, 'three tokens and the final object');
    }
    const metrics = await env.gw.metrics();
    const failed = /gateway_upstream_attempts_total\{node="a-broken",result="http_5xx"\} (\d+)/.exec(metrics);
    assert.ok(
      Number(failed?.[1] ?? 0) >= 1,
      metrics
        .split('\n')
        .filter((l) => l.includes('upstream_attempts'))
        .join('\n'),
    );
  } finally {
    await env.close();
  }
});
