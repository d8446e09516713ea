// Issue 27, tracing: there were no traces. Now with [tracing] a request is a SERVER span (the
// client's W3C traceparent its parent), each routing decision a span naming the chosen node and
// why, each attempt a CLIENT span with the GenAI attributes, and the attempt's traceparent is what
// the node receives — exported over OTLP/HTTP to the collector (here a receiver in the test). A
// streamed request that failed over has two attempt spans, the first marked failed over. With
// [server] workers = 2 each worker exports its own spans.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startScriptedNode, startTestGateway, type ScriptedNode, type TestGateway } from '#test/fixtures/scripted-node.ts';
import {
  CLIENT,
  INTERNAL,
  SERVER,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '#test/fixtures/otlp-receiver.ts';

const chunk = (word: string): string =>
  `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"${word}"},"finish_reason":null}]}\n\n`;
const USAGE =
  'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}\n\n';

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';

let receiver: OtlpReceiver;
let nodes: ScriptedNode[] = [];
let gw: TestGateway;
/** The next inference request any node gets fails with a 503 (the gateway fails over from it). */
const faults = { failNext: false };

function script(): Parameters<typeof startScriptedNode>[0] {
  return (_req, res) => {
    if (faults.failNext) {
      faults.failNext = false;
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"busy","type":"server_error"}}');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end([chunk('a'), chunk('b'), chunk('c'), USAGE, 'data: [DONE]\n\n'].join(''));
  };
}

async function streamChat(url: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await request(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    signal: AbortSignal.timeout(15_000),
  });
  await res.body.text();
  return res.statusCode;
}

const ofTrace = (trace: string) => (spans: readonly ReceivedSpan[]) => spans.filter((s) => s.traceId === trace);

before(async () => {
  receiver = await startOtlpReceiver();
  nodes = [await startScriptedNode(script()), await startScriptedNode(script())];
  gw = await startTestGateway(
    nodes.map((n, i) => ({ name: `n${i + 1}`, url: n.url })),
    `[tracing]\notlp_endpoint = "${receiver.url}"\nservice_name = "sy-test"`,
  );
});

after(async () => {
  await gw?.close();
  for (const node of nodes) await node.close();
  await receiver?.close();
});

test("a streamed request that fails over: its span, its routing decisions and two attempt spans, under the client's traceparent", async () => {
  faults.failNext = true;
  assert.equal(await streamChat(gw.url, { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` }), 200);
  const spansOf = ofTrace(CLIENT_TRACE);
  await receiver.waitFor((spans) => spansOf(spans).some((s) => s.kind === SERVER), 'the request span');
  const spans = spansOf(receiver.spans);

  const server = spans.filter((s) => s.kind === SERVER);
  assert.equal(server.length, 1);
  const root = server[0]!;
  assert.equal(root.parentSpanId, CLIENT_SPAN, "the client's span is the request span's parent");
  assert.equal(root.service, 'sy-test');
  assert.equal(root.resource['switchyard.plane'], 'main');
  assert.equal(root.name, 'chat m');
  assert.equal(root.attributes['gen_ai.operation.name'], 'chat');
  assert.equal(root.attributes['gen_ai.request.model'], 'm');
  assert.equal(root.attributes['gen_ai.response.model'], 'm');
  assert.equal(root.attributes['gen_ai.usage.input_tokens'], 9);
  assert.equal(root.attributes['gen_ai.usage.output_tokens'], 3);
  assert.equal(root.attributes['http.response.status_code'], 200);
  assert.equal(root.attributes['http.route'], '/v1/chat/completions');
  assert.equal(root.attributes['switchyard.attempts'], 2);
  assert.equal(typeof root.attributes['switchyard.request_id'], 'string');

  const attempts = spans
    .filter((s) => s.kind === CLIENT)
    .sort((a, b) => Number(a.attributes['switchyard.attempt']) - Number(b.attributes['switchyard.attempt']));
  assert.equal(attempts.length, 2, 'one span per attempt');
  const [first, second] = attempts as [ReceivedSpan, ReceivedSpan];
  for (const attempt of attempts) {
    assert.equal(attempt.parentSpanId, root.spanId);
    assert.equal(attempt.attributes['gen_ai.operation.name'], 'chat');
    assert.equal(attempt.attributes['gen_ai.request.model'], 'm');
    assert.equal(attempt.attributes['server.address'], '127.0.0.1');
    assert.equal(typeof attempt.attributes['server.port'], 'number');
  }
  assert.equal(first.attributes['switchyard.attempt.outcome'], 'http_5xx');
  assert.equal(first.attributes['http.response.status_code'], 503);
  assert.equal(first.attributes['switchyard.attempt.failed_over'], true);
  assert.equal(first.status, 2, 'the failed attempt is an error span');
  assert.equal(second.attributes['switchyard.attempt.outcome'], 'success');
  assert.equal(second.attributes['switchyard.attempt.failed_over'], false);
  assert.equal(second.attributes['gen_ai.response.model'], 'm');
  assert.equal(second.attributes['gen_ai.usage.input_tokens'], 9);
  assert.equal(second.attributes['gen_ai.usage.output_tokens'], 3);
  assert.notEqual(
    first.attributes['switchyard.node'],
    second.attributes['switchyard.node'],
    'the failover went to the other node',
  );

  // The node each attempt went to got that attempt's traceparent (vLLM continues it), not the client's.
  for (const attempt of attempts) {
    const node = nodes[Number(String(attempt.attributes['switchyard.node']).slice(1)) - 1]!;
    assert.equal(node.seen.lastHeaders?.traceparent, `00-${CLIENT_TRACE}-${attempt.spanId}-01`);
  }

  const routes = spans.filter((s) => s.kind === INTERNAL && s.name === 'switchyard.route');
  assert.equal(routes.length, 2, 'one routing decision per attempt');
  for (const route of routes) {
    assert.equal(route.parentSpanId, root.spanId);
    assert.equal(route.attributes['switchyard.route.among'], 'node');
    assert.equal(typeof route.attributes['switchyard.route.policy'], 'string');
    assert.equal(typeof route.attributes['switchyard.route.reason'], 'string');
  }
  assert.deepEqual(
    new Set(routes.map((r) => r.attributes['switchyard.route.chosen'])),
    new Set(attempts.map((a) => a.attributes['switchyard.node'])),
  );
});

test('a request without a traceparent starts a new trace, and its node is sent the attempt span as parent', async () => {
  assert.equal(await streamChat(gw.url), 200);
  const sent = [nodes[0]!.seen.lastHeaders?.traceparent, nodes[1]!.seen.lastHeaders?.traceparent];
  const fresh = sent
    .map((t) => /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(t)))
    .find((m) => m !== null && m[1] !== CLIENT_TRACE);
  assert.ok(fresh, `a node got a new trace's traceparent: ${sent.join(', ')}`);
  const [, traceId, spanId] = fresh;
  await receiver.waitFor((spans) => spans.some((s) => s.traceId === traceId && s.kind === SERVER), 'the new trace');
  const attempt = receiver.spans.find((s) => s.spanId === spanId);
  assert.equal(attempt?.kind, CLIENT);
  const root = receiver.spans.find((s) => s.traceId === traceId && s.kind === SERVER);
  assert.equal(root?.parentSpanId, '', 'a root span');
  assert.equal(attempt?.parentSpanId, root?.spanId);
});

test('with [server] workers = 2, each worker exports its own spans', async () => {
  const workers = await startTestGateway(
    [{ name: 'w1', url: nodes[0]!.url }],
    `[tracing]\notlp_endpoint = "${receiver.url}"\nservice_name = "sy-workers"`,
    (config) => ({ ...config, server: { ...config.server, workers: 2 } }),
  );
  try {
    const trace = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
    assert.equal(await streamChat(workers.url, { traceparent: `00-${trace}-bbbbbbbbbbbbbbbb-01` }), 200);
    await receiver.waitFor((spans) => spans.some((s) => s.traceId === trace && s.kind === CLIENT), "the worker's attempt span");
    const spans = receiver.spans.filter((s) => s.traceId === trace);
    const root = spans.find((s) => s.kind === SERVER);
    assert.equal(root?.service, 'sy-workers');
    assert.match(String(root?.resource['switchyard.plane']), /^worker-\d+$/);
    assert.equal(root?.parentSpanId, 'bbbbbbbbbbbbbbbb');
    assert.equal(spans.find((s) => s.kind === CLIENT)?.parentSpanId, root?.spanId);
  } finally {
    await workers.close();
  }
});
