// Issue 24, item 4: the llama-server simulator answered `/v1/audio/transcriptions` with its
// route-level 404, while the build it reproduces (b10587) has the route (tools/server/server.cpp
// `post_transcriptions_oai`, added in b8784; the router proxies it). Now the simulator answers as
// that build does — a multipart form with a `file`, only `response_format=json`, the answer
// `{"type":"transcript.text.done","text":…,"usage":{"type":"tokens",…}}` — single and router alike,
// and the official openai client transcribes through the gateway on it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { untilListed } from '#test/fixtures/gateway-waits.ts';

const FLEET = `
[[node]]
name = "single"
kind = "llamacpp"
ttft = "5ms"
models = ["voxtral"]

[[node]]
name = "router"
kind = "llamacpp-router"
ttft = "5ms"
load_time = "10ms"
models = ["voxtral-r"]
`;

let env: FleetAndGateway;
let client: OpenAI;

before(async () => {
  env = await startFleetAndGateway(FLEET, (sim) =>
    [
      '[server]\nlisten = "127.0.0.1:0"',
      '[health]\ninterval = "200ms"\ntimeout = "5s"',
      '[discovery]\ninterval = "300ms"\ntimeout = "5s"',
      ...sim.nodes.map((n) => `[[nodes]]\nname = "${n.name}"\nurl = "${n.url}"\nkind = "llamacpp"`),
    ].join('\n'),
  );
  await untilListed(env.gw, 2, 'both nodes listed');
  client = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
});

after(async () => {
  await env?.close();
});

const WAV = Buffer.concat([Buffer.from('RIFF\x24\x10\x00\x00WAVEfmt ', 'latin1'), Buffer.alloc(4096, 1)]);

for (const [model, node] of [
  ['voxtral', 'single'],
  ['voxtral-r', 'router'],
] as const) {
  test(`a transcription on a llama-server ${node} answers as build b10587`, async () => {
    const { data, response } = await client.audio.transcriptions
      .create({ file: await toFile(WAV, 'a.wav', { type: 'audio/wav' }), model })
      .withResponse();
    assert.equal(response.headers.get('x-switchyard-node'), node);
    const body = data as unknown as { type?: string; text?: string; usage?: { type?: string; total_tokens?: number } };
    assert.equal(body.type, 'transcript.text.done');
    assert.ok(String(body.text).length > 0);
    assert.equal(body.usage?.type, 'tokens');
    assert.ok(Number(body.usage?.total_tokens) > 0);
  });
}

test('only response_format=json, as the real build', async () => {
  await assert.rejects(
    client.audio.transcriptions.create({
      file: await toFile(WAV, 'a.wav', { type: 'audio/wav' }),
      model: 'voxtral',
      response_format: 'text',
    }),
    (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.match(String(error.message), /Only 'json' response_format is supported for transcription/);
      return true;
    },
  );
});
