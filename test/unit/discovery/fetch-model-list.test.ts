import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { Agent } from 'undici';
import type { NodeSpec } from '#src/config/types.ts';
import { ManualClock } from '#src/core/clock.ts';
import { fetchModelList } from '#src/discovery/fetch-model-list.ts';
import { spec } from '#test/fixtures/builders.ts';

interface FakeNode {
  readonly url: string;
  /** Headers and path of every request the node received, in order. */
  readonly requests: { path: string | undefined; headers: IncomingHttpHeaders }[];
  /** Resolves when the node has received its first request. */
  readonly received: Promise<void>;
  /** Resolves when the first response's connection has closed. */
  readonly responseClosed: Promise<void>;
}

/** A real HTTP node on 127.0.0.1, port 0, closed (with its connections) when the test ends. */
async function startNode(t: TestContext, handler: RequestListener): Promise<FakeNode> {
  const requests: FakeNode['requests'] = [];
  const received = Promise.withResolvers<void>();
  const responseClosed = Promise.withResolvers<void>();
  const server = createServer((req, res) => {
    requests.push({ path: req.url, headers: req.headers });
    res.once('close', () => responseClosed.resolve());
    received.resolve();
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests, received: received.promise, responseClosed: responseClosed.promise };
}

function agentFor(t: TestContext): Agent {
  const agent = new Agent({ connect: { timeout: 2_000 } });
  t.after(() => agent.destroy());
  return agent;
}

function nodeAt(url: string, fields: Partial<NodeSpec> = {}): NodeSpec {
  return spec('gpu-a', { url, kind: 'vllm', ...fields });
}

const json =
  (body: unknown, status = 200): RequestListener =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

const OPTIONS = { timeoutMs: 2_000, maxBodyBytes: 64 * 1024 };

test('lists the models a node serves on GET /v1/models', async (t) => {
  const node = await startNode(t, json({ object: 'list', data: [{ id: 'llama', max_model_len: 4096 }] }));
  const result = await fetchModelList(nodeAt(node.url), { ...OPTIONS, dispatcher: agentFor(t) });
  assert.deepEqual(result, {
    ok: true,
    models: [{ id: 'llama', loaded: true, status: undefined, contextTokens: 4096, aliases: [] }],
  });
  assert.equal(node.requests[0]?.path, '/v1/models');
});

test('sends the node api key as a bearer token', async (t) => {
  const node = await startNode(t, json({ data: [{ id: 'a' }] }));
  await fetchModelList(nodeAt(node.url, { apiKey: 'sk-secret' }), { ...OPTIONS, dispatcher: agentFor(t) });
  assert.equal(node.requests[0]?.headers.authorization, 'Bearer sk-secret');
});

test('sends no authorization header when the node has no api key', async (t) => {
  const node = await startNode(t, json({ data: [{ id: 'a' }] }));
  await fetchModelList(nodeAt(node.url), { ...OPTIONS, dispatcher: agentFor(t) });
  assert.equal(node.requests[0]?.headers.authorization, undefined);
});

test('reads Ollama "data": null as an empty listing', async (t) => {
  const node = await startNode(t, json({ object: 'list', data: null }));
  const result = await fetchModelList(nodeAt(node.url, { kind: 'ollama' }), { ...OPTIONS, dispatcher: agentFor(t) });
  assert.deepEqual(result, { ok: true, models: [] });
});

test('reports a non-2xx answer as an error naming the status and quoting the body', async (t) => {
  const node = await startNode(t, json({ error: { message: 'Loading model', type: 'unavailable_error', code: 503 } }, 503));
  const result = await fetchModelList(nodeAt(node.url), { ...OPTIONS, dispatcher: agentFor(t) });
  assert.equal(result.ok, false);
  assert.equal(result.ok ? undefined : result.reason, 'error');
  assert.match(result.ok ? '' : result.error, /HTTP 503: .*Loading model/);
});

test('reports HTTP 500 as an error', async (t) => {
  const node = await startNode(t, (_req, res) => {
    res.writeHead(500);
    res.end();
  });
  const result = await fetchModelList(nodeAt(node.url), { ...OPTIONS, dispatcher: agentFor(t) });
  assert.deepEqual(result, { ok: false, reason: 'error', error: `GET ${node.url}/v1/models answered HTTP 500` });
});

test('reports a body that is not JSON as a parse error', async (t) => {
  const node = await startNode(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html>proxy login</html>');
  });
  const result = await fetchModelList(nodeAt(node.url), { ...OPTIONS, dispatcher: agentFor(t) });
  assert.equal(result.ok ? undefined : result.reason, 'parse_error');
  assert.match(result.ok ? '' : result.error, /not valid JSON/);
});

test('reports an error object sent with HTTP 200 as a parse error', async (t) => {
  const node = await startNode(t, json({ error: { message: 'model is not loaded' } }));
  const result = await fetchModelList(nodeAt(node.url), { ...OPTIONS, dispatcher: agentFor(t) });
  assert.equal(result.ok ? undefined : result.reason, 'parse_error');
  assert.match(result.ok ? '' : result.error, /no 'data' field.*model is not loaded/);
});

test('refuses a body whose declared length exceeds maxBodyBytes, naming the limit', async (t) => {
  const node = await startNode(t, json({ data: [{ id: 'x'.repeat(2_000) }] }));
  const result = await fetchModelList(nodeAt(node.url), { ...OPTIONS, maxBodyBytes: 1_000, dispatcher: agentFor(t) });
  assert.equal(result.ok ? undefined : result.reason, 'parse_error');
  assert.match(result.ok ? '' : result.error, /exceeds the limit of 1000 bytes/);
});

test('stops reading an endless body past maxBodyBytes and closes the connection', async (t) => {
  const node = await startNode(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    // Chunked, no length, never ended: only the byte bound can stop the read.
    res.write(`{"data":[{"id":"${'x'.repeat(4_000)}`);
  });
  const result = await fetchModelList(nodeAt(node.url), { ...OPTIONS, maxBodyBytes: 1_000, dispatcher: agentFor(t) });
  assert.equal(result.ok ? undefined : result.reason, 'parse_error');
  assert.match(result.ok ? '' : result.error, /exceeds the limit of 1000 bytes/);
  await node.responseClosed;
});

test('times out a node that never answers once timeoutMs has passed on the clock', async (t) => {
  const clock = new ManualClock();
  const node = await startNode(t, () => {});
  const pending = fetchModelList(nodeAt(node.url), { ...OPTIONS, timeoutMs: 5_000, clock, dispatcher: agentFor(t) });
  await node.received;
  clock.advance(4_999);
  clock.advance(1);
  const result = await pending;
  assert.deepEqual(result, { ok: false, reason: 'timeout', error: `GET ${node.url}/v1/models timed out after 5000 ms` });
  await node.responseClosed;
});

test('times out a node that stalls in the middle of its body', async (t) => {
  const clock = new ManualClock();
  const node = await startNode(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"data":[');
  });
  const pending = fetchModelList(nodeAt(node.url), { ...OPTIONS, timeoutMs: 5_000, clock, dispatcher: agentFor(t) });
  await node.received;
  clock.advance(5_000);
  const result = await pending;
  assert.equal(result.ok ? undefined : result.reason, 'timeout');
});

test('times out on the system clock by default', async (t) => {
  // No clock is passed: the system clock's timer must end the read (a clock that never advances
  // would leave it pending until the file's bound). Judged by the reason, not by a stopwatch.
  const node = await startNode(t, () => {});
  const result = await fetchModelList(nodeAt(node.url), { ...OPTIONS, timeoutMs: 100, dispatcher: agentFor(t) });
  assert.equal(result.ok ? undefined : result.reason, 'timeout');
});

test('reports a refused connection as an error', async (t) => {
  // Ask a port nobody listens on: bind one, then close it.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const result = await fetchModelList(nodeAt(`http://127.0.0.1:${port}`), { ...OPTIONS, dispatcher: agentFor(t) });
  assert.equal(result.ok ? undefined : result.reason, 'error');
  assert.match(result.ok ? '' : result.error, /ECONNREFUSED/);
});

test('reports an aborted fetch as an error without waiting for the timeout', async (t) => {
  const node = await startNode(t, () => {});
  const controller = new AbortController();
  const pending = fetchModelList(nodeAt(node.url), {
    ...OPTIONS,
    timeoutMs: 60_000,
    signal: controller.signal,
    dispatcher: agentFor(t),
  });
  await node.received;
  controller.abort();
  const result = await pending;
  assert.deepEqual(result, { ok: false, reason: 'error', error: `GET ${node.url}/v1/models aborted` });
});

test('never reports the api key in an error', async (t) => {
  const node = await startNode(t, json({ error: 'nope' }, 401));
  const result = await fetchModelList(nodeAt(node.url, { apiKey: 'sk-secret' }), { ...OPTIONS, dispatcher: agentFor(t) });
  assert.equal(result.ok, false);
  assert.doesNotMatch(JSON.stringify(result), /sk-secret/);
});
