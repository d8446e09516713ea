// Issue 23, usage accounting, over the real HTTP interface with the official openai client: every
// simulated kind, streamed and not, on each inference endpoint. A stream the client did not ask
// usage for is counted from the usage the gateway asked for (or llama.cpp's own timings), and the
// client sees no usage chunk; a client that asked gets it; a stream cut short is counted as seen.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { setSimFaults } from '#test/fixtures/http.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import { requestEnds, untilListed } from '#test/fixtures/gateway-waits.ts';
import { untilEvent } from '#test/fixtures/events.ts';

type Finished = ProxyEvents['proxy:request-finished'];

/** Sim node → the kind it simulates; the gateway knows "openai" only as OpenAI-compatible, "auto" not at all. */
const SIMULATES: Readonly<Record<string, string>> = {
  vllm: 'vllm',
  llamacpp: 'llamacpp',
  sglang: 'sglang',
  ollama: 'ollama',
  openai: 'vllm',
  auto: 'sglang',
};
const FLEET = Object.entries(SIMULATES)
  .map(
    ([name, kind]) => `
[[node]]
name = "${name}"
kind = "${kind}"
models = ["m-${name}"]
ttft = "1ms"
tokens_per_second = 2000
`,
  )
  .join('');

/** The gateway's nodes, each configured as the kind its name says. */
const NODES = Object.keys(SIMULATES);
const SLOW = `
[[node]]
name = "slow"
kind = "vllm"
models = ["m-slow"]
ttft = "1ms"
tokens_per_second = 40
`;

let sim: SimFleet;
let gw: GatewayUnderTest;
let client: OpenAI;
const finished: Finished[] = [];

before(async () => {
  sim = await startSimFleet(FLEET + SLOW);
  gw = await startGateway(
    gatewayToml([...NODES, 'slow'].map((name) => ({ name, url: sim.url(name), kind: name === 'slow' ? 'vllm' : name }))),
  );
  gw.gateway.requestEvents.on('proxy:request-finished', (e) => finished.push(e));
  await untilListed(gw, NODES.length + 1, 'every node listed');
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 15_000 });
});

after(async () => {
  await gw?.close();
  await sim?.close();
});

/** The report of the next request to end, after `run` sends it. */
async function reportOf(run: () => Promise<unknown>): Promise<Finished> {
  const before = finished.length;
  await run();
  await untilEvent(() => finished.length > before, [requestEnds(gw)], 'the request reported');
  return finished[before] as Finished;
}

const messages = [{ role: 'user' as const, content: 'Count the words of this sentence please.' }];

for (const node of NODES) {
  describe(`a ${node} node`, () => {
    const model = `m-${node}`;
    test('a chat streamed without asking for usage is counted, and the client sees no usage', async () => {
      const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
      const report = await reportOf(async () => {
        const stream = await client.chat.completions.create({ model, messages, stream: true, max_tokens: 6 });
        for await (const chunk of stream) chunks.push(chunk);
      });
      assert.ok(chunks.length > 0);
      assert.equal(chunks.filter((c) => c.choices.length === 0).length, 0, 'no usage chunk');
      // SGLang states `"usage":null` on every chunk asked or not: it reaches the client as it was sent.
      // Of a node not told apart (`auto`, an SGLang here) they are taken out, as of OpenAI's.
      for (const c of chunks) assert.equal(c.usage, node === 'sglang' ? null : undefined, JSON.stringify(c));
      const tokens = chunks.filter((c) => (c.choices[0]?.delta.content ?? '') !== '').length;
      assert.equal(report.usage?.counted, 'usage');
      assert.equal(report.usage?.completionTokens, tokens);
      assert.ok((report.usage?.promptTokens ?? 0) > 0, JSON.stringify(report.usage));
    });

    test('a client that asks for usage gets the usage chunk, and the same count is reported', async () => {
      const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
      const report = await reportOf(async () => {
        const stream = await client.chat.completions.create({
          model,
          messages,
          stream: true,
          max_tokens: 5,
          stream_options: { include_usage: true },
        });
        for await (const chunk of stream) chunks.push(chunk);
      });
      const last = chunks.at(-1);
      assert.deepEqual(last?.choices, []);
      assert.deepEqual(
        { promptTokens: last?.usage?.prompt_tokens, completionTokens: last?.usage?.completion_tokens, counted: 'usage' },
        report.usage,
      );
    });

    test('a streamed completion is counted, with no usage chunk the client did not ask for', async () => {
      const chunks: OpenAI.Completions.Completion[] = [];
      const report = await reportOf(async () => {
        const stream = await client.completions.create({ model, prompt: 'Once upon a time', stream: true, max_tokens: 4 });
        for await (const chunk of stream) chunks.push(chunk);
      });
      assert.equal(chunks.filter((c) => c.choices.length === 0).length, 0, 'no usage chunk');
      assert.equal(report.usage?.counted, 'usage');
      assert.equal(report.usage?.completionTokens, 4);
    });

    test('answers held whole are counted on every endpoint: chat, completions, embeddings, responses', async () => {
      const chat = await reportOf(() => client.chat.completions.create({ model, messages, max_tokens: 3 }));
      assert.deepEqual([chat.usage?.completionTokens, chat.usage?.counted], [3, 'usage']);
      const completion = await reportOf(() => client.completions.create({ model, prompt: 'Once', max_tokens: 2 }));
      assert.deepEqual([completion.usage?.completionTokens, completion.usage?.counted], [2, 'usage']);
      const embeddings = await reportOf(() => client.embeddings.create({ model, input: 'four words of input' }));
      assert.equal(embeddings.usage?.counted, 'usage');
      assert.ok((embeddings.usage?.promptTokens ?? 0) > 0);
      const response = await reportOf(() => client.responses.create({ model, input: 'Hello there', max_output_tokens: 3 }));
      assert.deepEqual([response.usage?.completionTokens, response.usage?.counted], [3, 'usage']);
    });

    test('a Responses stream is counted from its response.completed event', async () => {
      const report = await reportOf(async () => {
        const stream = await client.responses.create({ model, input: 'Hello there', max_output_tokens: 4, stream: true });
        for await (const event of stream) void event;
      });
      assert.deepEqual([report.usage?.completionTokens, report.usage?.counted], [4, 'usage']);
    });
  });
}

test('a stream the node breaks off is settled from what was seen', async () => {
  await setSimFaults(sim.url('vllm'), { inference: 'midstream_reset', midstreamAfterChunks: 4 });
  try {
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    const report = await reportOf(async () => {
      // The gateway ends a broken event stream with an error event (no invented [DONE]): the client raises on it.
      const stream = await client.chat.completions.create({ model: 'm-vllm', messages, stream: true, max_tokens: 20 });
      await assert.rejects(
        async () => {
          for await (const chunk of stream) chunks.push(chunk);
        },
        (error: unknown) => error instanceof OpenAI.APIError && /broke off/.test(error.message),
      );
    });
    const tokens = chunks.filter((c) => (c.choices[0]?.delta.content ?? '') !== '').length;
    assert.deepEqual(report.usage, { promptTokens: undefined, completionTokens: tokens, counted: 'seen' });
    assert.ok(tokens > 0 && tokens < 20);
  } finally {
    await setSimFaults(sim.url('vllm'), { inference: 'none' });
  }
});

test('a stream the client leaves is settled from what was seen', async () => {
  let received = 0;
  const report = await reportOf(async () => {
    const stream = await client.chat.completions.create({ model: 'm-slow', messages, stream: true, max_tokens: 200 });
    // Leaving the loop aborts the client's request.
    for await (const chunk of stream) {
      if ((chunk.choices[0]?.delta.content ?? '') !== '') received += 1;
      if (received === 3) break;
    }
  });
  assert.equal(report.status, 499);
  assert.equal(report.usage?.counted, 'seen');
  assert.equal(report.usage?.promptTokens, undefined);
  // The gateway may have passed on a token or two the client had not read yet when it left.
  assert.ok(
    (report.usage?.completionTokens ?? 0) >= 3 && (report.usage?.completionTokens ?? 0) < 200,
    JSON.stringify(report.usage),
  );
});

test("with [server] workers = 2 a streamed answer is counted the same, reported on the owner's bus", async () => {
  const workers = await startGateway(gatewayToml([{ name: 'vllm', url: sim.url('vllm'), kind: 'vllm' }], '', 'workers = 2'));
  try {
    await untilListed(workers, 1, 'the node listed');
    const reports: Finished[] = [];
    workers.gateway.requestEvents.on('proxy:request-finished', (e) => reports.push(e));
    const viaWorkers = new OpenAI({ baseURL: `${workers.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 15_000 });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const c of await viaWorkers.chat.completions.create({ model: 'm-vllm', messages, stream: true, max_tokens: 6 }))
      chunks.push(c);
    assert.equal(chunks.filter((c) => c.choices.length === 0 || c.usage !== undefined).length, 0, 'no usage reached the client');
    await untilEvent(() => reports.length > 0, [requestEnds(workers)], 'the request reported');
    assert.deepEqual([reports[0]?.usage?.completionTokens, reports[0]?.usage?.counted], [6, 'usage']);
  } finally {
    await workers.close();
  }
});
