// Issue 23, usage accounting: nothing counted a streamed answer's tokens. OpenAI-compatible servers
// state a stream's usage only when asked (`stream_options.include_usage`), and most clients do not
// ask, so the gateway never saw it. Now the gateway asks the node for it when the client did not,
// counts it, and takes out of the client's stream what asking added — the usage chunk, and the
// `"usage":null` such a server then puts on every other chunk — so the client gets byte for byte
// the stream it would have got. Here a node answers as OpenAI does, in pieces cut mid-event and
// mid-UTF-8; and a forward to another site is asked and stripped the same way.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import OpenAI from 'openai';
import { CHAT, startScriptedNode, startTestGateway, type ScriptedNode, type TestGateway } from '#test/fixtures/scripted-node.ts';
import { TwoSiteMesh } from '#test/fixtures/two-site-mesh.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { requestEnds } from '#test/fixtures/gateway-waits.ts';

const WORDS = ['Grüße', ' aus', ' 東京', ' ✓'];
const chunk = (word: string, usage: string): string =>
  `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(word)}},"finish_reason":null}]${usage}}\n\n`;
/** What the node sends unasked: what the client must get. */
const UNASKED = WORDS.map((w) => chunk(w, '')).join('') + 'data: [DONE]\n\n';
/** What the node sends asked (as OpenAI, and vLLM before 0.6, do). */
const ASKED =
  WORDS.map((w) => chunk(w, ',"usage":null')).join('') +
  'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":4,"total_tokens":15}}\n\ndata: [DONE]\n\n';

let node: ScriptedNode;
let gw: TestGateway;
const bodies: Record<string, unknown>[] = [];
const rawBodies: string[] = [];

before(async () => {
  node = await startScriptedNode((_req, res, body) => {
    rawBodies.push(body.toString('utf8'));
    const json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    bodies.push(json);
    const asked = (json.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
    const bytes = Buffer.from(asked ? ASKED : UNASKED);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    // Written in 7-byte pieces, each flushed: events and UTF-8 sequences cut anywhere.
    let at = 0;
    const next = (): void => {
      if (at >= bytes.length) {
        res.end();
        return;
      }
      res.write(bytes.subarray(at, at + 7), () => setImmediate(next));
      at += 7;
    };
    next();
  });
  gw = await startTestGateway([{ name: 'n', url: node.url }]);
});

after(async () => {
  await gw?.close();
  await node?.close();
});

async function rawStream(body: Record<string, unknown>): Promise<string> {
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  assert.equal(res.statusCode, 200);
  return Buffer.from(await res.body.arrayBuffer()).toString('utf8');
}

test('the node is asked for usage, every other byte of the request kept, and the client gets byte for byte the unasked stream', async () => {
  const sent = '{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"seed":9007199254740993}';
  const res = await request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: sent,
    signal: AbortSignal.timeout(15_000),
  });
  const got = Buffer.from(await res.body.arrayBuffer()).toString('utf8');
  assert.deepEqual(bodies.at(-1)?.stream_options, { include_usage: true }, 'the node was asked for the usage');
  assert.equal(rawBodies.at(-1), `{"stream_options":{"include_usage":true},${sent.slice(1)}`, 'only the option added');
  assert.equal(got, UNASKED);
});

test('a client that asked for usage gets the stream as the node sent it', async () => {
  assert.equal(await rawStream({ ...CHAT, stream: true, stream_options: { include_usage: true } }), ASKED);
});

test("the streamed answer's usage is counted, and the openai client sees no usage chunk", async () => {
  const finished: ProxyEvents['proxy:request-finished'][] = [];
  const stop = gw.gateway.requestEvents.on('proxy:request-finished', (e) => finished.push(e));
  try {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 15_000 });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const c of await client.chat.completions.create({
      model: 'm',
      messages: CHAT.messages as OpenAI.Chat.ChatCompletionMessageParam[],
      stream: true,
    }))
      chunks.push(c);
    assert.deepEqual(
      chunks.map((c) => c.choices[0]?.delta.content),
      WORDS,
    );
    assert.ok(
      chunks.every((c) => c.usage === undefined),
      'no usage field at all',
    );
    await untilEvent(() => finished.length > 0, [requestEnds(gw)], 'the request reported');
    assert.deepEqual(finished[0]?.usage, { promptTokens: 11, completionTokens: 4, counted: 'usage' });
  } finally {
    stop();
  }
});

test('a forward to another site asks for the usage and takes out what asking added', async () => {
  const mesh = new TwoSiteMesh({ heartbeatMs: 200, freshnessMs: 2_000 });
  try {
    await mesh.start();
    await mesh.waitListed('a', 'm-c', 'c');
    await mesh.waitServed('a', 'm-c');
    const finished: ProxyEvents['proxy:request-finished'][] = [];
    const stop = mesh.site('a').gw.gateway.requestEvents.on('proxy:request-finished', (e) => finished.push(e));
    const client = new OpenAI({ baseURL: `${mesh.site('a').gw.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 15_000 });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const c of await client.chat.completions.create({
      model: 'm-c',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      max_tokens: 5,
    }))
      chunks.push(c);
    stop();
    assert.ok(chunks.length > 0);
    assert.equal(chunks.filter((c) => c.choices.length === 0).length, 0, 'no usage chunk');
    assert.ok(
      chunks.every((c) => c.usage === undefined),
      "no usage:null that c's vLLM added once asked",
    );
    await untilEvent(() => finished.length > 0, [requestEnds(mesh.site('a').gw)], 'the request reported');
    assert.equal(finished[0]?.node, 'site:c');
    assert.equal(finished[0]?.usage?.counted, 'usage');
    assert.equal(finished[0]?.usage?.completionTokens, chunks.filter((c) => (c.choices[0]?.delta.content ?? '') !== '').length);
  } finally {
    await mesh.close();
  }
});
