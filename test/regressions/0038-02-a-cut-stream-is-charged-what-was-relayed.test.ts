// Issue 38 item 2: a stream cut short was charged by each dialect's own accident. On Ollama's
// native API (NDJSON) a client that left after 250 tokens was charged 0 prompt and 0 completion
// tokens (nothing was counted on an NDJSON stream, and the final object with the counts never
// came); on Anthropic's /v1/messages the opening event's `output_tokens: 0` was taken as the
// final figure, so every token relayed after it was free. What must hold, for every dialect: a cut
// stream is charged what the node reported last, else what the gateway relayed, and never less
// than what was relayed (the completion tokens counted from the generated-text events passed on);
// the request log marks such a count `tokens_from: "seen"`. OpenAI chat streams, charged right
// before, stay so. The client leaves (or the node breaks off) once it has read what the test
// waits for; the figures are read from /admin/tenants once the request has settled.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { httpJson, setSimFaults } from '#test/fixtures/http.ts';
import { requestEnds, untilListed } from '#test/fixtures/gateway-waits.ts';
import { untilEvent } from '#test/fixtures/events.ts';

// Slow generation: a stream runs far longer than the test reads of it (1000 tokens at 20 a second).
const FLEET = `
[[node]]
name = "ol"
kind = "ollama"
ttft = "5ms"
tokens_per_second = 20
[[node.model]]
id = "llama3:latest"
status = "loaded"

[[node]]
name = "vl"
kind = "vllm"
ttft = "5ms"
tokens_per_second = 20
models = ["m"]

[[node]]
name = "broken"
kind = "ollama"
ttft = "5ms"
tokens_per_second = 200
[[node.model]]
id = "cut:latest"
status = "loaded"
`;

const TENANTS = ['ollama', 'anthropic', 'openai', 'broken']
  .map((name) => `[[tenants]]\nname = "${name}"\nkeys = ["sk-${name}"]\ntokens_per_day = 1000000`)
  .join('\n\n');

let env: FleetAndGateway;

before(async () => {
  env = await startFleetAndGateway(FLEET, (sim) =>
    [
      '[server]\nlisten = "127.0.0.1:0"\ndrain_timeout = "0s"',
      '[health]\ninterval = "200ms"',
      '[discovery]\ninterval = "300ms"',
      ...sim.nodes.map((n) => `[[nodes]]\nname = "${n.name}"\nurl = "${n.url}"\nkind = "${n.kind}"`),
      TENANTS,
    ].join('\n'),
  );
  await untilListed(env.gw, 3, 'every node listed');
});

after(async () => {
  await env?.close();
});

interface Today {
  readonly requests: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
}

async function tenant(name: string): Promise<{ inFlight: number; today: Today }> {
  const res = await httpJson('GET', `${env.gw.url}/admin/tenants`);
  const found = res.json<{ tenants: { name: string; inFlight: number; today: Today }[] }>().tenants.find((t) => t.name === name);
  assert.ok(found !== undefined, `tenant ${name}`);
  return found;
}

/** Waits until the tenant's one request is admitted and settled, and gives its day's figures. */
async function settled(name: string): Promise<Today> {
  await untilEvent(
    async () => {
      const t = await tenant(name);
      return t.today.requests === 1 && t.inFlight === 0;
    },
    [requestEnds(env.gw)],
    `${name}'s request settled`,
  );
  return (await tenant(name)).today;
}

/**
 * Streams `path` as tenant `name` and leaves once `enough` says the text read so far is enough;
 * gives what was read. The gateway has relayed at least that much when the client leaves.
 */
async function readThenLeave(
  name: string,
  path: string,
  body: Record<string, unknown>,
  enough: (text: string) => boolean,
): Promise<string> {
  const controller = new AbortController();
  const res = await request(`${env.gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer sk-${name}` },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  assert.equal(res.statusCode, 200);
  let text = '';
  try {
    for await (const chunk of res.body) {
      text += Buffer.from(chunk as Uint8Array).toString('utf8');
      if (enough(text)) break;
    }
  } finally {
    controller.abort();
  }
  return text;
}

const contentLines = (text: string): number => text.split('\n').filter((l) => /"content":"[^"]/.test(l)).length;
const events = (text: string, type: string): number =>
  text.split('\n').filter((l) => l.startsWith('data:') && l.includes(`"type":"${type}"`)).length;
const chatChunks = (text: string): number => text.split('\n').filter((l) => /"content":"[^"]/.test(l)).length;

test('Ollama native: a client that leaves mid-stream is charged the tokens relayed, and the prompt', async () => {
  const text = await readThenLeave(
    'ollama',
    '/api/chat',
    { model: 'llama3', messages: [{ role: 'user', content: 'tell me a long story' }], options: { num_predict: 1000 } },
    (t) => contentLines(t) >= 8,
  );
  const relayed = contentLines(text);
  const today = await settled('ollama');
  assert.ok(
    today.completionTokens >= relayed,
    `charged ${today.completionTokens} completion tokens, ${relayed} were read by the client`,
  );
  assert.ok(today.completionTokens < 1000, 'not the whole reservation');
  assert.ok(today.promptTokens > 0, 'the prompt is charged (its estimate: the node said nothing)');
  const line = (await httpJson('GET', `${env.gw.url}/admin/requests?limit=1`)).json<{
    requests: { tokens_from?: string; completion_tokens?: number; status: number }[];
  }>().requests[0];
  assert.equal(line?.status, 499);
  assert.equal(line?.tokens_from, 'seen', "the count is marked as the gateway's");
});

test("Anthropic /v1/messages: the opening event's output_tokens is not the final figure; the deltas relayed are charged", async () => {
  const text = await readThenLeave(
    'anthropic',
    '/v1/messages',
    { model: 'm', max_tokens: 1000, stream: true, messages: [{ role: 'user', content: 'tell me a long story' }] },
    (t) => events(t, 'content_block_delta') >= 8,
  );
  const relayed = events(text, 'content_block_delta');
  assert.equal(events(text, 'message_delta'), 0, 'cut before the node stated its final count');
  const today = await settled('anthropic');
  assert.ok(
    today.completionTokens >= relayed,
    `charged ${today.completionTokens} completion tokens, ${relayed} deltas were read by the client`,
  );
  assert.ok(today.completionTokens < 1000);
  assert.ok(today.promptTokens > 0, 'the input tokens message_start stated');
});

test('OpenAI chat stream: a client that leaves is charged what was relayed (as before)', async () => {
  const text = await readThenLeave(
    'openai',
    '/v1/chat/completions',
    { model: 'm', max_tokens: 1000, stream: true, messages: [{ role: 'user', content: 'tell me a long story' }] },
    (t) => chatChunks(t) >= 8,
  );
  const today = await settled('openai');
  assert.ok(today.completionTokens >= chatChunks(text));
  assert.ok(today.completionTokens < 1000);
});

test('Ollama native: a node that breaks off mid-stream is charged the lines relayed, not the whole reservation', async () => {
  await setSimFaults(env.sim.url('broken'), { inference: 'midstream_reset', midstreamAfterChunks: 6 });
  const res = await request(`${env.gw.url}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-broken' },
    body: JSON.stringify({ model: 'cut', messages: [{ role: 'user', content: 'hi' }], options: { num_predict: 1000 } }),
    signal: AbortSignal.timeout(60_000),
  });
  assert.equal(res.statusCode, 200);
  let text = '';
  try {
    for await (const chunk of res.body) text += Buffer.from(chunk as Uint8Array).toString('utf8');
  } catch {
    // The gateway ends the response abruptly once the node broke off.
  }
  const relayed = contentLines(text);
  assert.equal(relayed, 6, text);
  const today = await settled('broken');
  assert.equal(today.completionTokens, 6, 'the six lines relayed');
  assert.ok(today.promptTokens > 0);
});
