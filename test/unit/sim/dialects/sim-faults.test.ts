// Contract: every sim node's faults do what they say, in its kind's shapes, switched at runtime
// programmatically or through POST /__sim/faults; the control endpoint reads the recording.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { NO_FAULTS, SIM_KINDS, startSimNode, type SimKind, type SimNode } from '#src/sim/index.ts';
import { call, chat, json, list, record, sseMessages, waitUntil } from '#test/unit/sim/dialects/sim-http.ts';

interface PartialAnswer {
  readonly status: number | undefined;
  readonly headers: Readonly<Record<string, unknown>>;
  readonly text: string;
  readonly error: unknown;
}

/** Like `call`, but keeps what arrived before the connection failed. */
async function callPartial(url: string, body: unknown): Promise<PartialAnswer> {
  const chunks: Buffer[] = [];
  let status: number | undefined;
  let headers: Readonly<Record<string, unknown>> = {};
  try {
    const response = await request(url, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
      headersTimeout: 5000,
      bodyTimeout: 5000,
    });
    status = response.statusCode;
    headers = response.headers;
    for await (const chunk of response.body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    return { status, headers, text: Buffer.concat(chunks).toString(), error: undefined };
  } catch (error) {
    return { status, headers, text: Buffer.concat(chunks).toString(), error };
  }
}

function nodeOf(kind: SimKind): Promise<SimNode> {
  return startSimNode({ kind, models: [{ id: 'm', status: 'loaded' }], ttftMs: 1, tokensPerSecond: 5000 });
}

describe('inference faults', () => {
  let node: SimNode;
  before(async () => {
    node = await nodeOf('vllm');
  });
  after(() => node.close());

  test('hang accepts the request and never answers; the client leaving counts as an abort', async () => {
    node.setFaults({ inference: 'hang' });
    node.clearRecording();
    const controller = new AbortController();
    const pending = call(node.url, 'POST', '/v1/chat/completions', { body: chat('hi'), signal: controller.signal });
    await waitUntil(() => node.stats().inFlight === 1);
    controller.abort();
    await assert.rejects(pending);
    await waitUntil(() => node.stats().inFlight === 0);
    assert.deepEqual(
      { ...node.stats(), connectionsOpen: 0 },
      { inFlight: 0, completed: 0, clientAborted: 1, connectionsOpen: 0 },
    );
    assert.equal(node.requests().length, 1);
    assert.equal((await call(node.url, 'GET', '/v1/models')).status, 200, 'other endpoints still answer');
    node.setFaults(NO_FAULTS);
  });

  test('reset destroys the connection before any headers, not counted as a client abort', async () => {
    node.setFaults({ inference: 'reset' });
    node.clearRecording();
    const answer = await callPartial(`${node.url}/v1/chat/completions`, chat('hi'));
    assert.equal(answer.status, undefined);
    assert.ok(answer.error !== undefined);
    await waitUntil(() => node.stats().inFlight === 0);
    assert.equal(node.stats().clientAborted, 0);
    node.setFaults(NO_FAULTS);
  });

  test('garbage answers 200 with a body that is not JSON', async () => {
    node.setFaults({ inference: 'garbage' });
    const answer = await call(node.url, 'POST', '/v1/completions', { body: { prompt: 'x' } });
    assert.equal(answer.status, 200);
    assert.throws(() => JSON.parse(answer.text));
    node.setFaults(NO_FAULTS);
  });

  test('slow_headers holds the answer back for slowHeadersMs, then answers normally', async () => {
    node.setFaults({ inference: 'slow_headers', slowHeadersMs: 80 });
    const started = performance.now();
    const answer = await call(node.url, 'POST', '/v1/completions', { body: { prompt: 'x', max_tokens: 1 } });
    assert.ok(performance.now() - started >= 75);
    assert.equal(answer.status, 200);
    node.setFaults(NO_FAULTS);
  });

  test('midstream_reset lets N stream events through, then cuts the connection', async () => {
    node.setFaults({ inference: 'midstream_reset', midstreamAfterChunks: 2 });
    const answer = await callPartial(`${node.url}/v1/chat/completions`, chat('hi', { stream: true, max_tokens: 8 }));
    assert.equal(answer.status, 200);
    assert.ok(answer.error !== undefined, 'the body ended in an error');
    assert.equal(sseMessages(answer.text).length, 2);
    node.setFaults(NO_FAULTS);
  });

  test('midstream_reset sends half of a whole body, then cuts the connection', async () => {
    node.setFaults({ inference: 'midstream_reset' });
    const answer = await callPartial(`${node.url}/v1/chat/completions`, chat('hi', { max_tokens: 4 }));
    assert.equal(answer.status, 200);
    assert.ok(answer.error !== undefined);
    assert.ok(Number(answer.headers['content-length']) > answer.text.length);
    assert.throws(() => JSON.parse(answer.text));
    node.setFaults(NO_FAULTS);
  });

  test('loading answers llama.cpp\'s 503 "Loading model" body', async () => {
    node.setFaults({ inference: 'loading' });
    const answer = await call(node.url, 'POST', '/v1/embeddings', { body: { input: 'x' } });
    assert.equal(answer.status, 503);
    assert.equal(answer.text, '{"error":{"message":"Loading model","type":"unavailable_error","code":503}}');
    node.setFaults(NO_FAULTS);
  });

  test('closing the node ends a hung request at once', async () => {
    const other = await nodeOf('llamacpp');
    other.setFaults({ inference: 'hang' });
    // The client's own bound is far beyond anything the close could take, so a rejection that is not
    // a timeout is the close ending it (judged by the cause, not by a stopwatch).
    const pending = call(other.url, 'POST', '/v1/chat/completions', { body: chat('hi'), timeoutMs: 120_000 });
    await waitUntil(() => other.stats().inFlight === 1);
    await other.close();
    await assert.rejects(pending, (error: unknown) => {
      const name = error instanceof Error ? error.name : '';
      assert.ok(!/Timeout/i.test(name), `ended by the close, not by the client's timeout (${String(error)})`);
      return true;
    });
  });
});

describe("faults in each kind's shapes", () => {
  const nodes = new Map<SimKind, SimNode>();
  before(async () => {
    for (const kind of SIM_KINDS) nodes.set(kind, await nodeOf(kind));
  });
  after(async () => {
    await Promise.all([...nodes.values()].map((n) => n.close()));
  });
  const get = (kind: SimKind): SimNode => {
    const node = nodes.get(kind);
    if (node === undefined) throw new Error(kind);
    return node;
  };
  const healthPath: Record<SimKind, string> = {
    vllm: '/health',
    llamacpp: '/health',
    'llamacpp-router': '/health',
    ollama: '/',
    sglang: '/health',
    openai: '/health',
  };

  test("error500 answers inference with a 500 in the kind's error body", async () => {
    const expected: Record<SimKind, RegExp> = {
      vllm: /^\{"error":\{"message":"[^"]+","type":"InternalServerError","param":null,"code":500\}\}$/,
      llamacpp: /^\{"error":\{"code":500,"message":"[^"]+","type":"server_error"\}\}$/,
      'llamacpp-router': /^\{"error":\{"code":500,"message":"[^"]+","type":"server_error"\}\}$/,
      ollama: /^\{"error":\{"message":"[^"]+","type":"api_error","param":null,"code":null\}\}$/,
      sglang: /^\{"object":"error","message":"[^"]+","type":"InternalServerError","param":null,"code":500\}$/,
      openai: /^\{"error":\{"message":"[^"]+","type":"server_error","param":null,"code":null\}\}$/,
    };
    for (const kind of SIM_KINDS) {
      get(kind).setFaults({ inference: 'error500' });
      const answer = await call(get(kind).url, 'POST', '/v1/chat/completions', { body: chat('hi', { model: 'm' }) });
      assert.equal(answer.status, 500, kind);
      assert.match(answer.text, expected[kind], kind);
      get(kind).setFaults({ inference: 'none' });
    }
  });

  test("health fail answers the health endpoint with a 503 in the kind's shape; hang never answers", async () => {
    const expected: Record<SimKind, string> = {
      vllm: '',
      llamacpp: '{"error":{"message":"Loading model","type":"unavailable_error","code":503}}',
      'llamacpp-router': '{"error":{"message":"Loading model","type":"unavailable_error","code":503}}',
      ollama: 'Ollama is not available',
      sglang: '',
      openai: '{"status":"unavailable"}',
    };
    for (const kind of SIM_KINDS) {
      const node = get(kind);
      node.setFaults({ health: 'fail' });
      const answer = await call(node.url, 'GET', healthPath[kind]);
      assert.equal(answer.status, 503, kind);
      assert.equal(answer.text, expected[kind], kind);
      node.setFaults({ health: 'hang' });
      await assert.rejects(call(node.url, 'GET', healthPath[kind], { timeoutMs: 60 }), kind);
      node.setFaults({ health: 'none' });
      assert.equal((await call(node.url, 'GET', healthPath[kind])).status, 200, kind);
    }
  });

  test('model list faults: no_data, error_body, garbage, empty, error500 and hang', async () => {
    const empty: Record<SimKind, string> = {
      vllm: '{"object":"list","data":[]}',
      llamacpp: '{"models":[],"object":"list","data":[]}',
      'llamacpp-router': '{"data":[],"object":"list"}',
      ollama: '{"object":"list","data":null}',
      sglang: '{"object":"list","data":[]}',
      openai: '{"object":"list","data":[]}',
    };
    for (const kind of SIM_KINDS) {
      const node = get(kind);
      const models = () => call(node.url, 'GET', '/v1/models');
      node.setFaults({ models: 'no_data' });
      assert.deepEqual(await models().then((a) => [a.status, a.text]), [200, '{"object":"list"}'], kind);
      node.setFaults({ models: 'error_body' });
      assert.deepEqual(await models().then((a) => [a.status, a.text]), [200, '{"error":{"message":"boom"}}'], kind);
      node.setFaults({ models: 'garbage' });
      const garbage = await models();
      assert.equal(garbage.status, 200);
      assert.throws(() => JSON.parse(garbage.text), kind);
      node.setFaults({ models: 'empty' });
      assert.deepEqual(await models().then((a) => [a.status, a.text]), [200, empty[kind]], kind);
      node.setFaults({ models: 'error500' });
      assert.equal((await models()).status, 500, kind);
      node.setFaults({ models: 'hang' });
      await assert.rejects(call(node.url, 'GET', '/v1/models', { timeoutMs: 60 }), kind);
      node.setFaults({ models: 'none' });
      assert.equal(list(record(json(await models()))['data']).length, 1, kind);
    }
  });
});

describe('control endpoint', () => {
  let node: SimNode;
  before(async () => {
    node = await nodeOf('llamacpp');
  });
  after(() => node.close());

  test('merges POSTed faults and answers the full fault object; GET reads it back', async () => {
    const first = await call(node.url, 'POST', '/__sim/faults', { body: { inference: 'hang' } });
    assert.equal(first.status, 200);
    assert.deepEqual(json(first), { ...NO_FAULTS, inference: 'hang' });
    const second = json(await call(node.url, 'POST', '/__sim/faults', { body: { health: 'fail', slowHeadersMs: 10 } }));
    assert.deepEqual(second, { ...NO_FAULTS, inference: 'hang', health: 'fail', slowHeadersMs: 10 });
    assert.deepEqual(json(await call(node.url, 'GET', '/__sim/faults')), second);
    assert.deepEqual(node.faults(), second);
    const rejected = await call(node.url, 'POST', '/__sim/faults', { body: { inference: 'explode' } });
    assert.equal(rejected.status, 400);
    assert.deepEqual(node.faults(), second, 'a rejected patch changes nothing');
  });

  test('serves the recording and stats, and reset clears recording and faults', async () => {
    await call(node.url, 'POST', '/__sim/reset');
    await call(node.url, 'GET', '/props?model=x');
    const recorded = list(json(await call(node.url, 'GET', '/__sim/requests')));
    assert.equal(recorded.length, 1, 'control requests are not recorded');
    assert.deepEqual(
      { ...record(recorded[0]), at: 0 },
      { method: 'GET', path: '/props', query: { model: 'x' }, model: 'x', at: 0 },
    );
    const stats = record(json(await call(node.url, 'GET', '/__sim/stats')));
    assert.deepEqual(Object.keys(stats), ['inFlight', 'completed', 'clientAborted', 'connectionsOpen']);
    assert.equal(stats['completed'], 1);
    node.setFaults({ models: 'empty' });
    const reset = await call(node.url, 'POST', '/__sim/reset');
    assert.equal(reset.status, 200);
    assert.deepEqual(node.faults(), NO_FAULTS);
    assert.deepEqual(node.requests(), []);
    assert.equal((await call(node.url, 'GET', '/__sim/nothing')).status, 404);
  });

  test('counts open connections', async () => {
    await call(node.url, 'GET', '/health');
    assert.ok(node.stats().connectionsOpen >= 1, 'the keep-alive connection stays open');
  });
});
