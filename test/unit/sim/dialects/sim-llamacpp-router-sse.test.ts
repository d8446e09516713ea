// Contract: a `llamacpp-router` sim node pushes its models' state on `GET /models/sse` as llama-server
// b10573-14 does (server-models.cpp notify_sse; docs/protocols.md "Pushed model state"): one
// `data: {"model","event","data"}` frame per change, in order, for a load (model_status, progress,
// loaded with the child's info), an unload (exit code 0), a killed child (exit code 1, listed
// `failed`), a sleep and a wake, and a download (progress, finished, then listed and models_reload).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'node:http';
import { startSimNode, type SimNode } from '#src/sim/index.ts';
import { call, chat, eventually, json, list, record } from '#test/unit/sim/dialects/sim-http.ts';

interface Stream {
  readonly frames: Record<string, unknown>[];
  readonly raw: string[];
  readonly headers: Record<string, string | string[] | undefined>;
  close(): void;
}

/** Opens `/models/sse` and collects its frames as they come. */
function openSse(node: SimNode): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const frames: Record<string, unknown>[] = [];
    const raw: string[] = [];
    let pending = '';
    const req = request(`${node.url}/models/sse`, { headers: { accept: 'text/event-stream' } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        pending += chunk;
        for (let end = pending.indexOf('\n\n'); end >= 0; end = pending.indexOf('\n\n')) {
          const frame = pending.slice(0, end);
          pending = pending.slice(end + 2);
          raw.push(frame);
          frames.push(record(JSON.parse(frame.replace(/^data: /, ''))));
        }
      });
      res.on('error', () => {});
      resolve({ frames, raw, headers: res.headers, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

async function control(node: SimNode, action: string, model: string): Promise<void> {
  const answer = await call(node.url, 'POST', '/__sim/model', { body: { action, model } });
  assert.equal(answer.status, 200, answer.text);
}

async function listed(node: SimNode, id: string): Promise<Record<string, unknown> | undefined> {
  const body = record(json(await call(node.url, 'GET', '/v1/models')));
  return list(body['data'])
    .map(record)
    .find((e) => e['id'] === id);
}

async function withRouter(run: (node: SimNode, stream: Stream) => Promise<void>): Promise<void> {
  const node = await startSimNode({
    kind: 'llamacpp-router',
    models: [{ id: 'model-a', status: 'loaded' }, { id: 'model-b' }],
    contextTokens: 512,
    slots: 1,
    ttftMs: 1,
    tokensPerSecond: 5000,
    loadTimeMs: 30,
    modelsMax: 2,
  });
  const stream = await openSse(node);
  try {
    await run(node, stream);
  } finally {
    stream.close();
    await node.close();
  }
}

const until = (stream: Stream, count: number): Promise<void> => eventually(async () => stream.frames.length >= count);

test('the stream is text/event-stream, each frame one data line of {model, event, data}', async () => {
  await withRouter(async (node, stream) => {
    assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
    await call(node.url, 'POST', '/models/load', { body: { model: 'model-b' } });
    await until(stream, 4);
    assert.ok(
      stream.raw.every((frame) => /^data: \{"model":"model-b","event":"[a-z_]+"(,"data":\{.*\})?\}$/.test(frame)),
      stream.raw.join('\n'),
    );
    assert.deepEqual(
      stream.frames.slice(0, 3).map((f) => [f['event'], record(f['data'])['status']]),
      [
        ['model_status', 'loading'],
        ['status_change', 'loading'],
        ['status_change', 'loading'],
      ],
    );
    assert.deepEqual(record(stream.frames[1]?.['data'])['progress'], { stages: ['text_model'], current: 'text_model', value: 0 });
    assert.deepEqual(record(stream.frames[2]?.['data'])['progress'], { stages: ['text_model'], current: 'text_model', value: 1 });
    const loaded = record(stream.frames[3]?.['data']);
    assert.equal(loaded['status'], 'loaded');
    assert.equal(record(record(loaded['info'])['meta'])['n_ctx'], 512);
  });
});

test('an unload says exit code 0; a killed child says exit code 1 and the listing says failed', async () => {
  await withRouter(async (node, stream) => {
    await call(node.url, 'POST', '/models/unload', { body: { model: 'model-a' } });
    await until(stream, 1);
    assert.deepEqual(stream.frames[0], { model: 'model-a', event: 'status_change', data: { status: 'unloaded', exit_code: 0 } });
    await call(node.url, 'POST', '/models/load', { body: { model: 'model-b' } });
    await until(stream, 5);
    await control(node, 'crash', 'model-b');
    await until(stream, 6);
    assert.deepEqual(stream.frames[5], { model: 'model-b', event: 'status_change', data: { status: 'unloaded', exit_code: 1 } });
    const status = record((await listed(node, 'model-b'))?.['status']);
    assert.equal(status['value'], 'unloaded');
    assert.equal(status['failed'], true);
    assert.equal(status['exit_code'], 1);
  });
});

test('a sleep and the wake a request brings are pushed; sleeping is listed', async () => {
  await withRouter(async (node, stream) => {
    await control(node, 'sleep', 'model-a');
    await until(stream, 1);
    assert.deepEqual(stream.frames[0], { model: 'model-a', event: 'status_change', data: { status: 'sleeping' } });
    assert.equal(record((await listed(node, 'model-a'))?.['status'])['value'], 'sleeping');
    const answer = await call(node.url, 'POST', '/v1/chat/completions', {
      body: chat('hi', { model: 'model-a', max_tokens: 2 }),
    });
    assert.equal(answer.status, 200, answer.text);
    await until(stream, 2);
    // A wake carries no info (the child's ready report is empty then).
    assert.deepEqual(stream.frames[1], { model: 'model-a', event: 'status_change', data: { status: 'loaded' } });
  });
});

test('a download: listed downloading, progress frames, finished, then read in as a model with models_reload', async () => {
  await withRouter(async (node, stream) => {
    const started = await call(node.url, 'POST', '/models', { body: { model: 'org/new-model' } });
    assert.equal(started.status, 200, started.text);
    assert.equal(record((await listed(node, 'org/new-model'))?.['status'])['value'], 'downloading');
    await eventually(async () => stream.frames.some((f) => f['event'] === 'download_finished'));
    const events = stream.frames.map((f) => f['event']);
    assert.equal(events[0], 'model_status');
    assert.deepEqual(record(stream.frames[0]?.['data']), { status: 'downloading' });
    assert.equal(events.filter((e) => e === 'download_progress').length, 10);
    const last = record(record(stream.frames[10]?.['data'])['progress']);
    const [file] = Object.values(last).map(record);
    assert.equal(file?.['done'], file?.['total']);
    assert.deepEqual(stream.frames[11], { model: 'org/new-model', event: 'download_finished' });
    // The next read of its models re-reads the sources: an ordinary model, and models_reload.
    assert.equal(record((await listed(node, 'org/new-model'))?.['status'])['value'], 'unloaded');
    await until(stream, 13);
    assert.deepEqual(stream.frames[12], { model: '*', event: 'models_reload' });
    const again = await call(node.url, 'POST', '/models', { body: { model: 'org/new-model' } });
    assert.equal(again.status, 400);
  });
});
