// Issue 10, item 10: a node name outside header-safe characters (`gpu-α`, or one with a newline)
// passed check-config, then made every request through the node a 500 (ERR_INVALID_CHAR writing
// `x-switchyard-node`); the upstream stream was never aborted (the node kept generating for
// nobody) and the request never reached gateway_requests_total. Now the schema refuses such names,
// and independently anything that throws between sending and pumping aborts the upstream request
// and the request is counted as a 500.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { loadConfig } from '#src/config-tables.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { CHAT, startScriptedNode, startTestGateway, type ScriptedNode, type TestGateway } from '#test/fixtures/scripted-node.ts';

const open: { close(): Promise<void> }[] = [];
after(async () => {
  for (const thing of open.reverse()) await thing.close();
});

test('the config refuses node names that are not header-safe, naming the rule', () => {
  for (const bad of ['gpu-α', 'gpu\\nx', 'gpu a', '-gpu', 'x'.repeat(65)]) {
    const result = loadConfig(`[[nodes]]\nname = "${bad}"\nurl = "http://127.0.0.1:9"\n`, {});
    assert.equal(result.ok, false, bad);
    if (result.ok) continue;
    const problem = result.problems.find((p) => p.path === 'nodes[0].name');
    assert.match(problem?.message ?? '', /letters A-Z a-z, digits, and \. _ : @ -/, bad);
  }
  for (const good of ['gpu-a', 'box2.rack7', 'llama@10.0.0.5:8080', 'A_1', 'x'.repeat(64)]) {
    assert.equal(loadConfig(`[[nodes]]\nname = "${good}"\nurl = "http://127.0.0.1:9"\n`, {}).ok, true, good);
  }
});

test('a throw between sending and pumping aborts the upstream and is counted as a 500', async () => {
  // An endless stream: only the gateway closing the connection ends it.
  const node: ScriptedNode = await startScriptedNode((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"choices":[{"delta":{"content":"a"}}]}\n\n');
    const ticker = setInterval(() => res.write('data: {"choices":[{"delta":{"content":"a"}}]}\n\n'), 50);
    res.on('close', () => clearInterval(ticker));
  });
  open.push(node);
  // A name the schema now refuses, put in after loading: writing the x-switchyard-node header throws.
  const gw: TestGateway = await startTestGateway([{ name: 'gpu', url: node.url }], '', (config) => ({
    ...config,
    nodes: config.nodes.map((n) => ({ ...n, name: 'gpu\nx' })),
  }));
  open.push(gw);
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...CHAT, stream: true }),
    headersTimeout: 15_000,
    bodyTimeout: 15_000,
  });
  await res.body.text();
  assert.equal(res.statusCode, 500);
  await untilEvent(() => node.seen.abortedByGateway === 1, [node.activity], 'the upstream request aborted');
  const metrics = (await httpJson('GET', `${gw.url}/metrics`)).text;
  assert.match(metrics, /gateway_requests_total\{[^}]*status="500"[^}]*\} 1/);
});
