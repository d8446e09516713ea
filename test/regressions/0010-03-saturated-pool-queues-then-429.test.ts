// Issue 10, item 3 regression: each node's connection pool held at most 256 connections, fixed.
// Clients that started long streams and stopped reading pinned them all, and every later request
// to that node waited inside the pool with no timeout, no 429 and no log. Now the limit is
// `upstream.max_connections`; a node with that many requests in flight is excluded as
// `connections_full` (busy), so the next request waits in the model queue and gets 429 with
// Retry-After at `routing.queue_timeout`, and the saturation shows in /admin/runtime, /metrics and
// /admin/explain.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { request, type Dispatcher } from 'undici';
import { loadConfig } from '#src/config-tables.ts';
import { Gateway } from '#src/main.ts';
import { parseFleetConfig, startFleet, type Fleet } from '#src/sim/index.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { metricValue } from '#test/fixtures/gateway-state.ts';
import { explainOf } from '#test/fixtures/context.ts';
import { on, untilEvent } from '#test/fixtures/events.ts';

// One token a second: a stream asking for many tokens stays open for the whole test.
const FLEET = `
[[node]]
name = "slow"
kind = "vllm"
models = ["m"]
ttft = "1ms"
tokens_per_second = 1
`;

let fleet: Fleet;
let gateway: Gateway;
const streams: Dispatcher.ResponseData[] = [];
const streamAborts = new AbortController();

before(async () => {
  const spec = parseFleetConfig(FLEET);
  if (!spec.ok) throw new Error(JSON.stringify(spec.problems));
  fleet = await startFleet(spec.spec);
  const node = fleet.nodes[0];
  assert.ok(node !== undefined);
  const loaded = loadConfig(
    [
      '[server]',
      'listen = "127.0.0.1:0"',
      '[upstream]',
      'max_connections = 2',
      '[routing]',
      'queue_timeout = "300ms"',
      '[[nodes]]',
      'name = "slow"',
      `url = "${node.url}"`,
      'kind = "vllm"',
    ].join('\n'),
    {},
  );
  assert.ok(loaded.ok, JSON.stringify(loaded));
  gateway = await Gateway.start({ config: loaded.config, logger: pino({ level: 'silent' }) });
  await untilEvent(
    () => gateway.registry.views()[0]?.discovery.phase === 'known',
    [on(gateway.registry.events, 'node:discovery')],
    'the node listed',
  );
});

after(async () => {
  streamAborts.abort();
  for (const stream of streams) stream.body.destroy();
  await gateway?.close();
  await fleet?.close();
});

test('clients that hold every connection make the next request wait in the queue and get 429, not hang', async () => {
  for (let i = 0; i < 2; i++) {
    const res = await request(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', stream: true, max_tokens: 4_000, messages: [{ role: 'user', content: 'hi' }] }),
      signal: streamAborts.signal,
    });
    assert.equal(res.statusCode, 200);
    // The body is never read: this client has stopped reading.
    res.body.on('error', () => {});
    streams.push(res);
  }

  const explain = await explainOf(gateway.url, 'model=m');
  assert.equal(explain.outcome, 'queue');
  assert.equal(explain.nodes[0]?.reason, 'connections_full', JSON.stringify(explain));
  assert.match(String(explain.nodes[0]?.detail), /2\/2 connections/);

  const runtime = (await httpJson('GET', `${gateway.url}/admin/runtime`)).json<{
    upstream: Record<string, Record<string, unknown>>;
  }>();
  assert.equal(runtime.upstream.slow?.limit, 2);
  assert.equal(runtime.upstream.slow?.saturated, true);
  const metrics = (await httpJson('GET', `${gateway.url}/metrics`)).text;
  assert.equal(metricValue(metrics, 'gateway_upstream_saturated', { node: 'slow' }), 1);
  assert.equal(metricValue(metrics, 'gateway_upstream_connections', { node: 'slow', state: 'limit' }), 2);

  // httpJson gives up after 15 s: the old gateway never answered this request at all.
  const third = await httpJson('POST', `${gateway.url}/v1/chat/completions`, {
    model: 'm',
    max_tokens: 2,
    messages: [{ role: 'user', content: 'hi' }],
  });
  assert.equal(third.status, 429, third.text);
  assert.ok(Number(third.headers['retry-after']) >= 1, `Retry-After: ${String(third.headers['retry-after'])}`);
  assert.match(third.text, /queue/i);
});
