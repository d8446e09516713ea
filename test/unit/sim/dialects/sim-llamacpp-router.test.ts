// Contract: a `llamacpp-router` sim node answers like llama-server in router mode (PROTOCOLS.md
// §1.3, §1.4, §1.5, §7 "Router mode").

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startSimNode, type SimModelSpec, type SimNode, type SimNodeSpec } from '#src/sim/index.ts';
import { call, chat, eventually, json, keysOf, list, record } from '#test/unit/sim/dialects/sim-http.ts';

const LOAD_MS = 40;

async function withRouter(extra: Partial<SimNodeSpec>, run: (node: SimNode) => Promise<void>): Promise<void> {
  const models: SimModelSpec[] = [
    { id: 'model-a', status: 'loaded' },
    { id: 'model-b', aliases: ['bee', 'gpt-4o-mini'] },
    { id: 'model-c', contextTokens: 256 },
    { id: 'model-s', status: 'sleeping' },
  ];
  const node = await startSimNode({
    kind: 'llamacpp-router',
    models,
    contextTokens: 512,
    slots: 2,
    ttftMs: 2,
    tokensPerSecond: 2000,
    loadTimeMs: LOAD_MS,
    modelsMax: 3,
    ...extra,
  });
  try {
    await run(node);
  } finally {
    await node.close();
  }
}

async function statuses(node: SimNode): Promise<Record<string, string>> {
  const body = record(json(await call(node.url, 'GET', '/v1/models')));
  return Object.fromEntries(
    list(body['data']).map((entry) => {
      const e = record(entry);
      return [String(e['id']), String(record(e['status'])['value'])];
    }),
  );
}

async function entry(node: SimNode, id: string): Promise<Record<string, unknown>> {
  const body = record(json(await call(node.url, 'GET', '/v1/models')));
  const found = list(body['data'])
    .map(record)
    .find((e) => e['id'] === id);
  if (found === undefined) throw new Error(`no entry ${id}`);
  return found;
}

const invalid = (message: string): string => JSON.stringify({ error: { code: 400, message, type: 'invalid_request_error' } });

test('lists every model with its status in router key order, meta only when running', async () => {
  await withRouter({}, async (node) => {
    const answer = await call(node.url, 'GET', '/v1/models');
    const body = record(json(answer));
    assert.deepEqual(Object.keys(body), ['data', 'object']);
    assert.equal((await call(node.url, 'GET', '/models')).text.length, answer.text.length);
    const [a, b, c, s] = list(body['data']).map(record);
    const base = ['id', 'aliases', 'tags', 'object', 'owned_by', 'created', 'status', 'architecture', 'source', 'can_remove'];
    assert.deepEqual(Object.keys(a ?? {}), [...base, 'meta']);
    assert.deepEqual(Object.keys(b ?? {}), base);
    assert.deepEqual(Object.keys(s ?? {}), [...base, 'meta']);
    assert.deepEqual(b?.['aliases'], ['bee', 'gpt-4o-mini']);
    assert.equal(b?.['source'], 'preset');
    assert.equal(c?.['source'], 'models_dir');
    assert.deepEqual(keysOf(b?.['status']), ['value', 'args', 'preset']);
    const cStatus = record(c?.['status']);
    assert.equal(cStatus['value'], 'unloaded');
    const args = list(cStatus['args']);
    assert.equal(args[args.indexOf('--port') + 1], '0', 'never started: port 0');
    assert.equal(record(a?.['meta'])['n_ctx'], 512);
    assert.equal(record(s?.['status'])['value'], 'sleeping');
    assert.deepEqual(a?.['architecture'], { input_modalities: ['text'], output_modalities: ['text'] });
  });
});

test('answers /health itself, ignoring ?model= and loading nothing', async () => {
  await withRouter({}, async (node) => {
    const answer = await call(node.url, 'GET', '/health?model=model-b');
    assert.equal(answer.text, '{"status":"ok"}');
    assert.equal((await statuses(node))['model-b'], 'unloaded');
  });
});

test('answers plain /props as the router and /props?model= as that model, loading it first', async () => {
  await withRouter({}, async (node) => {
    const plain = await call(node.url, 'GET', '/props');
    assert.equal(
      plain.text,
      '{"role":"router","max_instances":3,"models_autoload":true,"model_alias":"llama-server","model_path":"none","default_generation_settings":{"params":null,"n_ctx":0},"ui_settings":{},"build_info":"b10587-3f545bec","cors_proxy_enabled":false}',
    );
    const started = performance.now();
    const proxied = record(json(await call(node.url, 'GET', '/props?model=bee')));
    assert.ok(performance.now() - started >= LOAD_MS - 5, 'waited for the load');
    assert.equal(proxied['model_alias'], 'model-b');
    assert.equal('role' in proxied, false);
    assert.equal(record(proxied['default_generation_settings'])['n_ctx'], 512);
    const b = await entry(node, 'model-b');
    assert.equal(record(b['status'])['value'], 'loaded');
    assert.equal(record(b['meta'])['n_ctx'], 512);
    const args = list(record(b['status'])['args']);
    assert.notEqual(args[args.indexOf('--port') + 1], '0', 'a started child has a real port');
  });
});

test('with autoload off answers unloaded models with "model is not loaded", unless ?autoload=true', async () => {
  await withRouter({ autoload: false }, async (node) => {
    const refused = await call(node.url, 'GET', '/props?model=model-b');
    assert.equal(refused.status, 400);
    assert.equal(refused.text, invalid('model is not loaded'));
    assert.equal(record(json(await call(node.url, 'GET', '/props')))['models_autoload'], false);
    const forced = await call(node.url, 'POST', '/v1/chat/completions?autoload=true', {
      body: chat('hi', { model: 'model-b', max_tokens: 1 }),
    });
    assert.equal(forced.status, 200);
  });
  await withRouter({}, async (node) => {
    const refused = await call(node.url, 'GET', '/slots?model=model-c&autoload=false');
    assert.equal(refused.text, invalid('model is not loaded'));
    assert.equal((await statuses(node))['model-c'], 'unloaded');
  });
});

test('needs a model on proxied endpoints and rejects unknown ones with a 400', async () => {
  await withRouter({}, async (node) => {
    const missing = [
      await call(node.url, 'GET', '/slots'),
      await call(node.url, 'GET', '/metrics'),
      await call(node.url, 'POST', '/tokenize', { body: { content: 'hi' } }),
      await call(node.url, 'POST', '/v1/chat/completions', { body: chat('hi') }),
    ];
    for (const answer of missing) {
      assert.equal(answer.status, 400);
      assert.equal(answer.text, invalid('model name is missing from the request'));
    }
    const unknownChat = await call(node.url, 'POST', '/v1/chat/completions', { body: chat('hi', { model: 'nope' }) });
    assert.equal(unknownChat.status, 400);
    assert.equal(unknownChat.text, invalid("model 'nope' not found"));
    assert.equal((await call(node.url, 'GET', '/props?model=nope')).text, invalid("model 'nope' not found"));
  });
});

test('serves a request by alias under the canonical id, chunked like a proxied answer', async () => {
  await withRouter({}, async (node) => {
    const answer = await call(node.url, 'POST', '/v1/chat/completions', {
      body: chat('hi', { model: 'gpt-4o-mini', max_tokens: 2 }),
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['transfer-encoding'], 'chunked');
    assert.equal(answer.headers['content-length'], undefined);
    assert.equal(record(json(answer))['model'], 'model-b');
  });
});

test('loads on POST /models/load at once, shows "loading" without meta, then "loaded"', async () => {
  await withRouter({ loadTimeMs: 300 }, async (node) => {
    const loaded = await call(node.url, 'POST', '/models/load', { body: { model: 'model-c' } });
    assert.equal(loaded.status, 200);
    assert.equal(loaded.text, '{"success":true}');
    const loading = await entry(node, 'model-c');
    assert.equal(record(loading['status'])['value'], 'loading');
    assert.equal('meta' in loading, false);
    const again = await call(node.url, 'POST', '/models/load', { body: { model: 'model-c' } });
    assert.equal(again.status, 400);
    assert.equal(again.text, invalid('model is already running'));
    const unknown = await call(node.url, 'POST', '/models/load', { body: { model: 'nope' } });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.text, '{"error":{"message":"File Not Found","type":"not_found_error","code":404}}');
    await eventually(async () => (await statuses(node))['model-c'] === 'loaded');
  });
});

test('unloads on POST /models/unload at once, with its two 400s', async () => {
  await withRouter({}, async (node) => {
    const done = await call(node.url, 'POST', '/models/unload', { body: { model: 'model-a' } });
    assert.equal(done.text, '{"success":true}');
    assert.equal((await statuses(node))['model-a'], 'unloaded');
    assert.equal(
      (await call(node.url, 'POST', '/models/unload', { body: { model: 'model-a' } })).text,
      invalid('model is not running'),
    );
    assert.equal(
      (await call(node.url, 'POST', '/models/unload', { body: { model: 'nope' } })).text,
      invalid('model is not found'),
    );
  });
});

test('holds requests for a loading model until it is ready; without autoload they get 503', async () => {
  await withRouter({ loadTimeMs: 300 }, async (node) => {
    await call(node.url, 'POST', '/models/load', { body: { model: 'model-c' } });
    const refused = await call(node.url, 'POST', '/v1/completions?autoload=false', { body: { model: 'model-c', prompt: 'x' } });
    assert.equal(refused.status, 503);
    assert.equal(refused.text, '{"error":{"message":"Loading model","type":"unavailable_error","code":503}}');
    const waited = await call(node.url, 'POST', '/v1/completions', { body: { model: 'model-c', prompt: 'x', max_tokens: 1 } });
    assert.equal(waited.status, 200);
    assert.equal((await statuses(node))['model-c'], 'loaded');
  });
});

test('fails a waiting request with "failed to load" when its model is unloaded mid-load', async () => {
  await withRouter({ loadTimeMs: 5000 }, async (node) => {
    const waiting = call(node.url, 'POST', '/v1/chat/completions', { body: chat('hi', { model: 'model-c' }) });
    await eventually(async () => (await statuses(node))['model-c'] === 'loading');
    await call(node.url, 'POST', '/models/unload', { body: { model: 'model-c' } });
    const answer = await waiting;
    assert.equal(answer.status, 500);
    assert.equal(answer.text, '{"error":{"code":500,"message":"model name=model-c failed to load","type":"server_error"}}');
  });
});

test('evicts the least recently used running model at models_max; only POSTs count as use', async () => {
  await withRouter({ modelsMax: 3 }, async (node) => {
    // model-a and model-s run from the start (a first); model-b joins by a POST.
    await call(node.url, 'POST', '/v1/chat/completions', { body: chat('hi', { model: 'model-b', max_tokens: 1 }) });
    await call(node.url, 'GET', '/props?model=model-a');
    await call(node.url, 'POST', '/models/load', { body: { model: 'model-c' } });
    // model-c may have finished loading already on a busy machine: what counts is who was evicted.
    const { 'model-c': spawned, ...others } = await statuses(node);
    assert.ok(spawned === 'loading' || spawned === 'loaded', `model-c is ${spawned}`);
    assert.deepEqual(others, { 'model-a': 'unloaded', 'model-b': 'loaded', 'model-s': 'sleeping' });
    await call(node.url, 'POST', '/v1/completions', { body: { model: 'model-s', prompt: 'x', max_tokens: 1 } });
    await call(node.url, 'POST', '/models/load', { body: { model: 'model-a' } });
    assert.equal(
      (await statuses(node))['model-b'],
      'unloaded',
      'model-b was used before model-c was spawned and model-s was posted to',
    );
  });
});

test('wakes a sleeping model when a request reaches it', async () => {
  await withRouter({}, async (node) => {
    const answer = await call(node.url, 'POST', '/v1/chat/completions', {
      body: chat('hi', { model: 'model-s', max_tokens: 1 }),
    });
    assert.equal(answer.status, 200);
    assert.equal((await statuses(node))['model-s'], 'loaded');
  });
});

test("passes the child's exceed-context error through unchanged", async () => {
  await withRouter({}, async (node) => {
    const answer = await call(node.url, 'POST', '/v1/chat/completions', {
      body: chat('x '.repeat(300), { model: 'model-c', stream: true }),
    });
    assert.equal(answer.status, 400);
    assert.equal(
      answer.text,
      '{"error":{"code":400,"message":"request (307 tokens) exceeds the available context size (256 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":307,"n_ctx":256}}',
    );
  });
});

test('records the model a request named, from the body or ?model=', async () => {
  await withRouter({}, async (node) => {
    await call(node.url, 'GET', '/slots?model=model-a');
    await call(node.url, 'POST', '/models/unload', { body: { model: 'model-a' } });
    assert.deepEqual(
      node.requests().map((r) => [r.method, r.path, r.model]),
      [
        ['GET', '/slots', 'model-a'],
        ['POST', '/models/unload', 'model-a'],
      ],
    );
  });
});
