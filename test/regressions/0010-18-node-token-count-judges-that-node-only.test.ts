// Issue 10, item 18 regression: a node's own token count was adopted for the whole request. A node
// answering llama.cpp's overflow error with `n_prompt_tokens: 99999999` made the gateway judge every
// other node by that figure, so a request that fits elsewhere failed with 400. Now the node's figures
// judge that node only (its count is clamped to the gateway's upper bound and may only lower the
// estimate), and a refusal the prompt's size disproves is counted as a contradiction and, like a
// failed request, ejects the node after `upstream.eject_after_failures` of them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { loadConfig } from '#src/config-tables.ts';
import { Gateway } from '#src/main.ts';
import { parseFleetConfig, startFleet, type Fleet } from '#src/sim/index.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { metricValue, servedBy } from '#test/fixtures/gateway-state.ts';
import { on, untilEvent } from '#test/fixtures/events.ts';

const FLEET = `
[[node]]
name = "good"
kind = "vllm"
models = ["m"]
context = 8192
ttft = "1ms"
tokens_per_second = 1000
`;

const OVERFLOW = JSON.stringify({
  error: {
    code: 400,
    message: 'request (99999999 tokens) exceeds the available context size (4096 tokens), try increasing it',
    type: 'exceed_context_size_error',
    n_prompt_tokens: 99_999_999,
    n_ctx: 4096,
  },
});

let fleet: Fleet;
let liar: Server;
let liarPosts = 0;
let gateway: Gateway;

before(async () => {
  liar = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/v1/models') {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model' }] }));
        return;
      }
      liarPosts += 1;
      res.writeHead(400, { 'content-type': 'application/json' }).end(OVERFLOW);
    });
  });
  await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', resolve));
  const spec = parseFleetConfig(FLEET);
  if (!spec.ok) throw new Error(JSON.stringify(spec.problems));
  fleet = await startFleet(spec.spec);
  const loaded = loadConfig(
    [
      '[server]',
      'listen = "127.0.0.1:0"',
      '[upstream]',
      'eject_after_failures = 2',
      'eject_for = "1h"',
      '[[nodes]]',
      'name = "liar"',
      `url = "http://127.0.0.1:${(liar.address() as AddressInfo).port}"`,
      'kind = "openai"',
      '[[nodes]]',
      'name = "good"',
      `url = "${fleet.nodes[0]?.url}"`,
      'kind = "vllm"',
    ].join('\n'),
    {},
  );
  assert.ok(loaded.ok, JSON.stringify(loaded));
  gateway = await Gateway.start({ config: loaded.config, logger: pino({ level: 'silent' }) });
  await untilEvent(
    () => gateway.registry.views().every((v) => v.discovery.phase === 'known'),
    [on(gateway.registry.events, 'node:discovery')],
    'both nodes listed',
  );
});

after(async () => {
  await gateway?.close();
  await fleet?.close();
  liar?.closeAllConnections();
  await new Promise<void>((resolve) => liar?.close(() => resolve()));
});

test("a node's absurd prompt count does not turn away a request that fits another node", async () => {
  // Both nodes are candidates; keep asking until the liar has refused twice.
  for (let i = 0; i < 20 && liarPosts < 2; i++) {
    const res = await httpJson('POST', `${gateway.url}/v1/chat/completions`, {
      model: 'm',
      max_tokens: 4,
      messages: [{ role: 'user', content: 'a short prompt that fits 8192 tokens easily' }],
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(servedBy(res), 'good');
  }
  assert.equal(liarPosts, 2, 'the lying node was tried');

  const metrics = (await httpJson('GET', `${gateway.url}/metrics`)).text;
  assert.equal(metricValue(metrics, 'gateway_upstream_contradictions_total', { node: 'liar' }), 2);
  assert.notEqual(gateway.registry.view('liar')?.ejectedUntil, undefined, 'two contradictions eject the node');
});
