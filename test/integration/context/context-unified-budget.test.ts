// llama.cpp's unified KV cache over the real wire: all slots of a model share one pool of n_ctx
// tokens, and when the requests in flight outgrow it the server fails every one of them with
// 500 "Context size has been exceeded.". The same concurrent load that breaks the node when sent
// to it directly must all succeed through the gateway, which leases prompt + max_tokens of the pool
// per request and holds the rest back in its queue — in one thread, and with `[server] workers = 2`,
// where two request threads share the main thread's leases.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { simStats } from '#test/fixtures/http.ts';
import { chatOfTokens, hostOf, mulberry32, waitForHost } from '#test/fixtures/context.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges, requestEnds } from '#test/fixtures/gateway-waits.ts';

const CONTEXT = 4096;
const SLOTS = 4;

const FLEET = `
[[node]]
name = "pool"
kind = "llamacpp"
models = ["pooled"]
context = ${CONTEXT}
slots = ${SLOTS}
kv = "unified"
ttft = "5ms"
tokens_per_second = 2000
`;

const REQUESTS = 16;

interface Outcome {
  readonly status: number;
  readonly text: string;
}

/** The same seeded load every run: prompts of 900–1300 tokens, answers of 300–600. */
function load(): Record<string, unknown>[] {
  const random = mulberry32(4096);
  return Array.from({ length: REQUESTS }, (_, i) => {
    const prompt = 900 + Math.floor(random() * 400);
    const maxTokens = 300 + Math.floor(random() * 300);
    return chatOfTokens('pooled', prompt, { max_tokens: maxTokens, stream: i % 2 === 1 });
  });
}

async function send(baseUrl: string, body: Record<string, unknown>): Promise<Outcome> {
  const res = await request(`${baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: res.statusCode, text: await res.body.text() };
}

/** A 500, or a stream that carried an error event instead of finishing. */
function failed(outcome: Outcome): boolean {
  return (
    outcome.status !== 200 ||
    /"error"/.test(outcome.text) ||
    (outcome.text.startsWith('data:') && !outcome.text.includes('[DONE]'))
  );
}

let sim: SimFleet;
const gateways = new Map<number, GatewayUnderTest>();

before(async () => {
  sim = await startSimFleet(FLEET);
  for (const workers of [1, 2]) {
    const gw = await startGateway(
      gatewayToml([{ name: 'pool', url: sim.url('pool'), kind: 'llamacpp', kv: 'unified' }], '', `workers = ${workers}`),
    );
    gateways.set(workers, gw);
    await waitForHost(gw, 'pool', (h) => h.models?.pooled?.n_ctx === CONTEXT && h.models.pooled.slots === SLOTS, 'pool figures');
  }
});

after(async () => {
  for (const gw of gateways.values()) await gw.close();
  await sim?.close();
});

test('the load exhausts the unified pool when sent straight to the node (so the gateway test can fail)', async () => {
  const outcomes = await Promise.all(load().map((body) => send(sim.url('pool'), body)));
  const broken = outcomes.filter(failed);
  assert.ok(broken.length > 0, 'some requests failed on the node itself');
  assert.ok(
    broken.some((o) => o.text.includes('Context size has been exceeded.')),
    `the node's own KV-exhaustion error: ${broken[0]?.text.slice(0, 200)}`,
  );
  await untilEvent(async () => (await simStats(sim.url('pool'))).inFlight === 0, [sim.activity('pool')], 'the node idle again');
});

for (const workers of [1, 2])
  test(`through the gateway (${workers} worker(s)) the same load all succeeds, and the leased tokens never exceed the pool`, async () => {
    const gw = gateways.get(workers);
    assert.ok(gw !== undefined);
    let sampling = true;
    let peakTokens = 0;
    let peakRequests = 0;
    const sampler = (async () => {
      while (sampling) {
        const lease = (await hostOf(gw.url, 'pool')).leases.pooled;
        peakTokens = Math.max(peakTokens, lease?.tokens ?? 0);
        peakRequests = Math.max(peakRequests, lease?.requests ?? 0);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const outcomes = await Promise.all(load().map((body) => send(gw.url, body)));
    sampling = false;
    await sampler;

    const broken = outcomes.filter(failed);
    assert.deepEqual(
      broken.map((o) => `${o.status} ${o.text.slice(0, 120)}`),
      [],
      'no request failed',
    );
    for (const outcome of outcomes) {
      if (outcome.text.startsWith('data:')) assert.match(outcome.text, /"finish_reason":"length"/);
      else assert.equal(JSON.parse(outcome.text).choices[0].finish_reason, 'length');
    }
    assert.ok(peakTokens <= CONTEXT, `leased tokens stayed within the pool (peak ${peakTokens})`);
    assert.ok(peakRequests >= 2, `requests still ran side by side (peak ${peakRequests})`);
    await untilEvent(
      async () => (await hostOf(gw.url, 'pool')).in_flight === 0,
      [requestEnds(gw), nodeChanges(gw)],
      'leases returned',
    );
  });
