// Issue 21, item 3: the simulated servers ignored `encoding_format: "base64"` and always answered a
// float array, so the official openai client (which asks for base64 whenever its caller names no
// format) got an answer no real server sends. vLLM, llama.cpp and Ollama answer the base64 of the
// little-endian float32 vector; the client decodes it to the same numbers as the float request.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { waitForHost } from '#test/fixtures/context.ts';
import { httpJson } from '#test/fixtures/http.ts';

const KINDS = [
  { node: 'v', kind: 'vllm', model: 'embed-v' },
  { node: 'l', kind: 'llamacpp', model: 'embed-l' },
  { node: 'o', kind: 'ollama', model: 'embed-o:latest' },
] as const;

let fleet: FleetAndGateway;
let client: OpenAI;
/** The body of each answer the client received, as it came over the wire (before the client decodes it). */
const wire: unknown[] = [];
const recordingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const response = await fetch(input, init);
  wire.push(await response.clone().json());
  return response;
};

before(async () => {
  fleet = await startFleetAndGateway(
    KINDS.map(
      (k) => `[[node]]\nname = "${k.node}"\nkind = "${k.kind}"\nmodels = ["${k.model}"]\nttft = "1ms"\nload_time = "1ms"\n`,
    ).join(''),
    (sim) => gatewayToml(KINDS.map((k) => ({ name: k.node, url: sim.url(k.node), kind: k.kind }))),
  );
  for (const k of KINDS) await waitForHost(fleet.gw, k.node, (h) => h.discovery.state === 'known', 'listed');
  client = new OpenAI({ baseURL: `${fleet.gw.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 15_000, fetch: recordingFetch });
});

after(() => fleet?.close());

for (const { kind, model } of KINDS) {
  test(`${kind}: the openai client's default embeddings request decodes to the float request's vector`, async () => {
    const input = ['embed me', 'and me too'];
    const asFloats = await client.embeddings.create({ model, input, encoding_format: 'float' });
    const byDefault = await client.embeddings.create({ model, input });
    const received = wire.at(-1) as { data: { embedding: unknown }[] };
    assert.ok(
      received.data.every((d) => typeof d.embedding === 'string'),
      'the client asked for base64 and got base64 strings',
    );
    assert.equal(byDefault.data.length, 2);
    for (const [index, entry] of byDefault.data.entries()) {
      const expected = asFloats.data[index]?.embedding ?? [];
      assert.equal(expected.length, 64, "the float answer has the model's 64 dimensions");
      assert.equal(entry.embedding.length, 64, 'the decoded vector has 64 dimensions');
      assert.deepEqual(entry.embedding, expected, 'the same numbers, element for element');
    }
  });

  test(`${kind}: what the client receives for its default request is base64 of little-endian float32`, async () => {
    const raw = await httpJson('POST', `${fleet.gw.url}/v1/embeddings`, { model, input: 'embed me', encoding_format: 'base64' });
    assert.equal(raw.status, 200, raw.text);
    const floats = await httpJson('POST', `${fleet.gw.url}/v1/embeddings`, { model, input: 'embed me' });
    const encoded = raw.json<{ data: { embedding: unknown }[] }>().data[0]?.embedding;
    assert.equal(typeof encoded, 'string', `a base64 string, not ${JSON.stringify(encoded).slice(0, 40)}`);
    const bytes = Buffer.from(String(encoded), 'base64');
    const decoded = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
    assert.deepEqual(decoded, floats.json<{ data: { embedding: number[] }[] }>().data[0]?.embedding);
  });
}
