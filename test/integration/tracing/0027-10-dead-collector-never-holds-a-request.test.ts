// Issue 27, tracing with a collector that is down: requests are answered as without tracing (the
// spans wait in a bounded queue and go out in the background), the failed exports are counted in
// gateway_trace_spans_total{outcome="failed"} and logged once, and the gateway still stops within
// its bounds (the last flush gives up; it never waits on the collector).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import { unusedPort } from '#test/fixtures/context.ts';
import { metricValue } from '#test/fixtures/gateway-state.ts';
import {
  CHAT,
  chatAnswer,
  startScriptedNode,
  startTestGateway,
  type ScriptedNode,
  type TestGateway,
} from '#test/fixtures/scripted-node.ts';

let node: ScriptedNode;
let gw: TestGateway;

before(async () => {
  node = await startScriptedNode(
    (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(chatAnswer()),
  );
  // Nothing listens on this port: every export is refused.
  const port = await unusedPort();
  gw = await startTestGateway([{ name: 'n', url: node.url }], `[tracing]\notlp_endpoint = "http://127.0.0.1:${port}/v1/traces"`);
});

after(async () => {
  await gw?.close();
  await node?.close();
});

test('a collector that is down: every request answered, the failed spans counted and logged once, the stop bounded', async () => {
  const answers = await Promise.all(Array.from({ length: 20 }, () => httpJson('POST', `${gw.url}/v1/chat/completions`, CHAT)));
  assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
  const failed = async (): Promise<number> =>
    metricValue((await httpJson('GET', `${gw.url}/metrics`)).text, 'gateway_trace_spans_total', { outcome: 'failed' });
  await eventually(async () => (await failed()) > 0, 30_000, 'failed exports counted');
  const text = (await httpJson('GET', `${gw.url}/metrics`)).text;
  assert.equal(metricValue(text, 'gateway_trace_spans_total', { outcome: 'exported' }), 0);
  assert.equal(metricValue(text, 'gateway_trace_spans_total', { outcome: 'dropped' }), 0, 'the queue did not fill');
  const warnings = gw.logs().filter((line) => String(line.msg).startsWith('the trace collector does not accept spans'));
  assert.equal(warnings.length, 1, 'told once per failing spell');
  // More requests while it stays down: still answered, still one warning.
  assert.equal((await httpJson('POST', `${gw.url}/v1/chat/completions`, CHAT)).status, 200);
  const closing = gw.close();
  await closing;
  assert.equal(gw.logs().filter((line) => String(line.msg).startsWith('the trace collector does not accept spans')).length, 1);
});
