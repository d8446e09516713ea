// Contract: a llamacpp sim node (single and router) keeps resumable streams as llama-server does at
// 3f545becc (tools/server/server-stream.cpp, server-models.cpp `router_stream_*`; docs/protocols.md
// §7.z4): a streamed completion with `X-Conversation-Id` is kept in a ring that outlives its client
// (the generation goes on after the client leaves), `GET /v1/stream?conv_id=&from=N` replays from
// byte N and follows live bytes, `POST /v1/streams/lookup` answers only for the ids asked, `DELETE
// /v1/stream` is 204 whether or not the session existed; the ring's cap and the GC's 300 s after
// completion on a 60 s tick (unit, on a manual clock); the router's 503 while the owner loads and a
// stop during the load cancelling the parked request.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { ManualClock } from '#src/core/clock.ts';
import { startSimNode, type SimNode, type SimNodeSpec } from '#src/sim/index.ts';
import { StreamSession, StreamSessions } from '#src/sim/stream-sessions.ts';
import { parseFrom } from '#src/sim/kinds/llamacpp-streams.ts';
import { call, json } from '#test/unit/sim/dialects/sim-http.ts';

const SINGLE: SimNodeSpec = {
  kind: 'llamacpp',
  models: [{ id: 'tiny' }],
  contextTokens: 512,
  slots: 2,
  ttftMs: 1,
  tokensPerSecond: 200,
};
const ROUTER: SimNodeSpec = {
  kind: 'llamacpp-router',
  models: [{ id: 'model-a', status: 'loaded' }, { id: 'model-b' }],
  contextTokens: 512,
  slots: 2,
  ttftMs: 1,
  tokensPerSecond: 200,
  loadTimeMs: 400,
  modelsMax: 2,
};

const chatBody = (model: string, stream = true): string =>
  JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 40, stream });

/** Starts a stream with the header and reads until `bytes` arrived, then drops the connection: what it got. */
async function dropAfter(node: SimNode, model: string, conv: string, bytes: number): Promise<Buffer> {
  const controller = new AbortController();
  const answer = await request(`${node.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-conversation-id': conv },
    body: chatBody(model),
    signal: controller.signal,
  });
  const got = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    answer.body.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (Buffer.concat(chunks).length >= bytes) resolve(Buffer.concat(chunks));
    });
    answer.body.on('error', reject);
  });
  answer.body.on('error', () => {});
  controller.abort();
  return got;
}

async function replay(node: SimNode, conv: string, from: number | string): Promise<{ status: number; bytes: Buffer }> {
  const answer = await request(`${node.url}/v1/stream?conv_id=${encodeURIComponent(conv)}&from=${from}`, {
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  return { status: answer.statusCode, bytes: Buffer.from(await answer.body.arrayBuffer()) };
}

const lookup = async (node: SimNode, body: unknown) => call(node.url, 'POST', '/v1/streams/lookup', { body });

for (const [what, spec, model] of [
  ['single', SINGLE, 'tiny'],
  ['router', ROUTER, 'model-a'],
] as const) {
  test(`${what}: a client that left mid-stream reattaches from the bytes it got and gets the rest exactly once`, async () => {
    const node = await startSimNode(spec);
    try {
      const conv = 'conv-1::org/model';
      const got = await dropAfter(node, model, conv, 1);
      // The generation went on without the client: the rest follows live, then ends.
      const rest = await replay(node, conv, got.length);
      assert.equal(rest.status, 200);
      const whole = await replay(node, conv, 0);
      assert.equal(whole.status, 200);
      assert.deepEqual(Buffer.concat([got, rest.bytes]), whole.bytes);
      assert.match(whole.bytes.toString('utf8'), /data: \[DONE\]\n\n$/);
      const entries = json(await lookup(node, { conversation_ids: [conv, 'never-seen', 7] }));
      assert.ok(Array.isArray(entries));
      assert.equal(entries.length, 1);
      const entry = entries[0] as Record<string, unknown>;
      assert.equal(entry['conversation_id'], conv);
      assert.equal(entry['is_done'], true);
      assert.equal(entry['total_bytes'], whole.bytes.length);
      assert.ok(Number(entry['completed_at']) >= Number(entry['started_at']));
      // DELETE drops it; an unknown id is 204 too; no id is 400.
      const del = await request(`${node.url}/v1/stream?conv_id=${encodeURIComponent(conv)}`, { method: 'DELETE' });
      assert.equal(del.statusCode, 204);
      await del.body.dump();
      assert.equal((await replay(node, conv, 0)).status, 404);
      const again = await request(`${node.url}/v1/stream?conv_id=unknown`, { method: 'DELETE' });
      assert.equal(again.statusCode, 204);
      await again.body.dump();
      const missing = await replay(node, '', 0);
      assert.equal(missing.status, 400);
      assert.match(missing.bytes.toString(), /Missing conversation id in path/);
      assert.deepEqual(json(await lookup(node, { conversation_ids: [conv] })), []);
    } finally {
      await node.close();
    }
  });

  test(`${what}: a bad offset is 400, an unknown conversation 404, and a JSON answer keeps no session`, async () => {
    const node = await startSimNode(spec);
    try {
      const plain = await call(node.url, 'POST', '/v1/chat/completions', {
        body: chatBody(model, false),
        headers: { 'x-conversation-id': 'conv-json' },
      });
      assert.equal(plain.status, 200);
      assert.equal((await replay(node, 'conv-json', 0)).status, 404);
      await dropAfter(node, model, 'conv-2', 1);
      const bad = await replay(node, 'conv-2', 'abc');
      assert.equal(bad.status, 400);
      assert.match(bad.bytes.toString(), /Invalid 'from' offset/);
      const unknown = await replay(node, 'nobody', 0);
      assert.equal(unknown.status, 404);
      // The HTTP layer words every 404 itself (server-http.cpp's error handler).
      assert.equal(unknown.bytes.toString(), '{"error":{"message":"File Not Found","type":"not_found_error","code":404}}');
    } finally {
      await node.close();
    }
  });
}

test('single: lookup matches `<id>::<model>` sessions; a body that does not parse is 400 on a child, [] on the router', async () => {
  const single = await startSimNode(SINGLE);
  const router = await startSimNode(ROUTER);
  try {
    await dropAfter(single, 'tiny', 'conv-9::tiny', 1);
    const entries = json(await lookup(single, { conversation_ids: ['conv-9'] }));
    assert.ok(Array.isArray(entries) && entries.length === 1);
    const bad = await lookup(single, 'not json');
    assert.equal(bad.status, 400);
    assert.match(bad.text, /invalid body/);
    // The router maps exact ids only: `conv-9` names no POST it routed.
    await dropAfter(router, 'model-a', 'conv-9::model-a', 1);
    assert.deepEqual(json(await lookup(router, { conversation_ids: ['conv-9'] })), []);
    const routerBad = await lookup(router, 'not json');
    assert.equal(routerBad.status, 200);
    assert.deepEqual(json(routerBad), []);
  } finally {
    await Promise.all([single.close(), router.close()]);
  }
});

test('router: while the owner model loads a resume is 503, and a stop cancels the parked request', async () => {
  const node = await startSimNode(ROUTER);
  try {
    const parked = call(node.url, 'POST', '/v1/chat/completions', {
      body: chatBody('model-b'),
      headers: { 'x-conversation-id': 'conv-load' },
      timeoutMs: 10_000,
    });
    // The POST is remembered before the load wait.
    let loading: { status: number; bytes: Buffer } | undefined;
    for (let i = 0; i < 100; i++) {
      loading = await replay(node, 'conv-load', 0);
      if (loading.status !== 404) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.equal(loading?.status, 503);
    assert.match(loading?.bytes.toString() ?? '', /Stream owner model is loading, retry later/);
    const stop = await request(`${node.url}/v1/stream?conv_id=conv-load`, { method: 'DELETE' });
    assert.equal(stop.statusCode, 204);
    await stop.body.dump();
    const answer = await parked;
    assert.equal(answer.status, 400);
    assert.match(answer.text, /request cancelled by a stop while the model was loading/);
  } finally {
    await node.close();
  }
});

test('the ring keeps the last 4 MiB (a chunk past the cap keeps its tail); an offset below the dropped prefix is lost', () => {
  const session = new StreamSession('c', 0, 10);
  session.append(Buffer.from('0123456'));
  session.append(Buffer.from('789ab'));
  assert.equal(session.totalBytes, 12);
  assert.equal(session.droppedPrefix, 2);
  const seen: Buffer[] = [];
  assert.equal(session.read(1, { bytes: (b) => seen.push(b), done: () => {} }), undefined, 'below the dropped prefix: lost');
  const stop = session.read(2, { bytes: (b) => seen.push(b), done: () => {} });
  assert.ok(stop !== undefined);
  assert.equal(Buffer.concat(seen).toString(), '23456789ab');
  session.append(Buffer.from('ABCDEFGHIJKL'));
  assert.equal(session.droppedPrefix, 14);
  assert.equal(session.totalBytes, 24);
  assert.deepEqual(parseFrom('12abc'), 12);
  assert.equal(parseFrom('x'), undefined);
  assert.equal(parseFrom(undefined), 0);
});

test('the GC drops a completed session at the first 60 s tick at least 300 s after it completed; a live one is kept', () => {
  const clock = new ManualClock(1_700_000_000_000);
  const sessions = new StreamSessions(clock);
  const done = sessions.createOrReplace('done');
  const live = sessions.createOrReplace('live');
  clock.advance(30_000);
  sessions.finish(done);
  clock.advance(300_000); // 330 s: the tick at 300 s saw it 270 s old.
  assert.ok(sessions.get('done') !== undefined);
  clock.advance(29_000); // 359 s: still before the 360 s tick.
  assert.ok(sessions.get('done') !== undefined);
  clock.advance(1_000); // the 360 s tick: completed 330 s before.
  assert.equal(sessions.get('done'), undefined);
  clock.advance(3_600_000);
  assert.equal(sessions.get('live'), live);
  // A newer POST for the id cancels the old session.
  const fresh = sessions.createOrReplace('live');
  assert.equal(live.cancelled.aborted, true);
  assert.equal(sessions.get('live'), fresh);
});
