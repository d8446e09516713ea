// Issue 27, metrics: /metrics had no tokens by model and node, nothing about a stream's time to
// first token or its inter-token latency, and request duration by model only. Now
// gateway_tokens_total{model,node,kind}, gateway_time_to_first_token_seconds and
// gateway_inter_token_latency_seconds (measured on the stream as it passes) and
// gateway_endpoint_request_duration_seconds{endpoint,model} are there, with bounded labels.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startScriptedNode, startTestGateway, type ScriptedNode, type TestGateway } from '#test/fixtures/scripted-node.ts';
import { httpJson } from '#test/fixtures/http.ts';

const chunk = (word: string): string =>
  `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"${word}"},"finish_reason":null}]}\n\n`;
const USAGE =
  'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}\n\n';

let node: ScriptedNode;
let gw: TestGateway;

before(async () => {
  node = await startScriptedNode((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const parts = [chunk('a'), chunk('b'), chunk('c'), USAGE, 'data: [DONE]\n\n'];
    const next = (): void => {
      const part = parts.shift();
      if (part === undefined) return void res.end();
      res.write(part, () => setTimeout(next, 10));
    };
    next();
  });
  gw = await startTestGateway([{ name: 'n', url: node.url }]);
});

after(async () => {
  await gw?.close();
  await node?.close();
});

test('a stream counts its tokens by model, node and kind, and times its first token and the gaps after it', async () => {
  for (let i = 0; i < 2; i++) {
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true }),
      signal: AbortSignal.timeout(15_000),
    });
    await res.body.text();
    assert.equal(res.statusCode, 200);
  }
  const text = (await httpJson('GET', `${gw.url}/metrics`)).text;
  assert.match(text, /gateway_tokens_total\{model="m",node="n",kind="prompt"\} 18/);
  assert.match(text, /gateway_tokens_total\{model="m",node="n",kind="completion"\} 6/);
  assert.match(text, /gateway_time_to_first_token_seconds_count\{model="m"\} 2/);
  assert.match(text, /gateway_inter_token_latency_seconds_count\{model="m"\} 2/);
  // Two gaps of at least 10 ms per stream: the mean is at least 5 ms on any machine.
  const sum = Number(/gateway_inter_token_latency_seconds_sum\{model="m"\} ([\d.e-]+)/.exec(text)?.[1]);
  assert.ok(sum >= 0.01, `inter-token sum ${sum}`);
  assert.match(text, /gateway_endpoint_request_duration_seconds_count\{endpoint="\/v1\/chat\/completions",model="m"\} 2/);
  assert.doesNotMatch(text, /gateway_request_log_lines_total\{/, 'no request log configured: no line counts');
});
