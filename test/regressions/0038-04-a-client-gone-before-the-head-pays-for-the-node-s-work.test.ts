// Issue 38 item 4: a client that left before the answer's head paid nothing, though the node had
// the request and worked on it (3 requests × 2.5 s at the node, 0 tokens charged): the request
// ended as a client abort (499), which settled as "not served" and gave the whole reservation back.
// What must hold: once the node was sent the request, a client that leaves before anything of the
// answer could be read is charged what the node is known to have done — its prompt as the gateway
// sized it, and the tokens it generated until the cancel reached it, estimated from the node's
// speed as learned from the answers it streamed (the time it had the request, less its time to the
// first token, at its tokens per second, never more than max_tokens) — and the request log marks
// the figures `tokens_from: "estimated"`, `estimated_from: "decode_rate"`; with no speed learned
// yet, the prompt alone (`estimated_from: "prompt"`). Before, the generation was charged 0 tokens
// whatever the node had done (a client leaving 3 s into a 200-token answer paid its prompt alone).
// The node runs on a manual clock the test moves: it holds every request until the test lets it
// generate, so the client leaves while the node is working, whatever the machine's speed; the
// gateway's clock leaps (JumpingClock) by the times the test names, so the node's learned speed
// and the time it had the request are the test's, not the machine's.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { ManualClock } from '#src/core/clock.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { gatewayConfig, modelState, waitForNode } from '#test/fixtures/gateway-state.ts';
import { httpJson, simStats } from '#test/fixtures/http.ts';
import { JumpingClock } from '#test/fixtures/test-clocks.ts';
import { onEmitter, untilEvent } from '#test/fixtures/events.ts';
import { requestEnds } from '#test/fixtures/gateway-waits.ts';

const HELD_FLEET = `[[node]]\nname = "held"\nkind = "vllm"\nmodels = ["m"]\nttft = "1s"\ntokens_per_second = 100\n`;

const TENANTS = ['json', 'stream', 'teach', 'rated', 'capped']
  .map((name) => `[[tenants]]\nname = "${name}"\nkeys = ["sk-${name}"]\ntokens_per_day = 1000000`)
  .join('\n\n');

const nodeClock = new ManualClock();
const gatewayClock = new JumpingClock();
let sim: SimFleet;
let gw: GatewayUnderTest;

before(async () => {
  sim = await startSimFleet(HELD_FLEET, { clock: nodeClock });
  gw = await startGateway(
    gatewayConfig({
      health: { interval: '100ms', timeout: '5s', failThreshold: 2 },
      discovery: { interval: '100ms', timeout: '5s' },
      nodes: [{ name: 'held', url: sim.url('held'), kind: 'vllm' }],
      extra: TENANTS,
    }),
    { clock: gatewayClock },
  );
  await waitForNode(gw, 'held', modelState('known'), 'known');
});

after(async () => {
  await gw?.close();
  await sim?.close();
});

interface Today {
  readonly requests: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
}

async function tenant(name: string): Promise<{ inFlight: number; today: Today }> {
  const res = await httpJson('GET', `${gw.url}/admin/tenants`);
  const found = res.json<{ tenants: { name: string; inFlight: number; today: Today }[] }>().tenants.find((t) => t.name === name);
  assert.ok(found !== undefined, `tenant ${name}`);
  return found;
}

interface LogLine {
  readonly tenant?: string;
  readonly status: number;
  readonly prompt_tokens?: number;
  readonly completion_tokens?: number;
  readonly tokens_from?: string;
  readonly estimated_from?: string;
}

/** Sends a request as `name` and leaves once `ready` holds (the node has it), before any answer; waits until it has settled. */
async function leaveEarly(name: string, body: Record<string, unknown>, ready: () => Promise<boolean>): Promise<Today> {
  const controller = new AbortController();
  const sent = request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer sk-${name}` },
    body: JSON.stringify(body),
    signal: controller.signal,
  }).catch((error: unknown) => error);
  await untilEvent(ready, [sim.activity('held')], `${name}'s request at the node`);
  controller.abort();
  assert.ok((await sent) instanceof Error, 'no answer came: the client left before the head');
  await untilEvent(
    async () => {
      const t = await tenant(name);
      return t.today.requests === 1 && t.inFlight === 0;
    },
    [requestEnds(gw)],
    `${name}'s request settled`,
  );
  return (await tenant(name)).today;
}

const atNode = (count: number) => async (): Promise<boolean> => (await simStats(sim.url('held'))).inFlight === count;

async function lastLine(name: string): Promise<LogLine | undefined> {
  const lines = (await httpJson('GET', `${gw.url}/admin/requests?limit=20`)).json<{ requests: LogLine[] }>().requests;
  return lines.find((l) => l.tenant === name);
}

const PROMPT = 'Summarise the history of the printing press in three paragraphs, please.';

test('a whole (JSON) answer: the client leaves while the node works; the prompt is charged, estimated', async () => {
  const today = await leaveEarly(
    'json',
    { model: 'm', max_tokens: 200, messages: [{ role: 'user', content: PROMPT }] },
    atNode(1),
  );
  await untilEvent(
    async () => ((await simStats(sim.url('held'))).clientAborted ?? 0) >= 1,
    [sim.activity('held')],
    'the node saw the cancel',
  );
  assert.ok(today.promptTokens > 0, `the prompt is charged: ${today.promptTokens}`);
  assert.ok(today.promptTokens < 200, `the prompt as sized, not the reservation: ${today.promptTokens}`);
  assert.equal(today.completionTokens, 0, 'nothing is known of the generation');
  const line = await lastLine('json');
  assert.equal(line?.status, 499);
  assert.equal(line?.tokens_from, 'estimated');
  assert.equal(line?.prompt_tokens, today.promptTokens);
});

test('a stream whose head had not come: the same', async () => {
  const today = await leaveEarly(
    'stream',
    { model: 'm', max_tokens: 200, stream: true, messages: [{ role: 'user', content: PROMPT }] },
    atNode(1),
  );
  assert.ok(today.promptTokens > 0);
  assert.equal(today.completionTokens, 0, 'no speed learned yet: the prompt alone');
  const line = await lastLine('stream');
  assert.equal(line?.tokens_from, 'estimated');
  assert.equal(line?.estimated_from, 'prompt');
});

/**
 * One streamed answer of 40 tokens the gateway learns the node's speed from: the gateway's clock
 * leaps 500 ms before the first token comes (1 s of the node's clock) and 1,000 ms before the other
 * 39 do: about 39 tokens a second, the first after about 500 ms.
 */
async function teachOneStream(): Promise<void> {
  await untilEvent(atNode(0), [sim.activity('held')], 'the node idle');
  // The answer's head comes with its first token: the request is not awaited before the node generates.
  const answered = request(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-teach' },
    body: JSON.stringify({ model: 'm', max_tokens: 40, stream: true, messages: [{ role: 'user', content: PROMPT }] }),
  });
  await untilEvent(atNode(1), [sim.activity('held')], 'the teaching request at the node');
  gatewayClock.jump(500);
  nodeClock.advance(1_000);
  const { body } = await answered;
  let text = '';
  body.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  const ended = new Promise<void>((resolve, reject) => {
    body.on('end', resolve);
    body.on('error', reject);
  });
  await untilEvent(() => text.includes('"content"'), [onEmitter(body, 'the answer', 'data')], 'the first token relayed');
  gatewayClock.jump(1_000);
  nodeClock.advance(1_000);
  await ended;
  assert.ok(text.includes('[DONE]'), 'the answer came whole');
}

test("after streamed answers taught the node's speed, a client leaving is charged the generation until the cancel, estimated, capped", async () => {
  for (let i = 0; i < 3; i += 1) await teachOneStream();
  const learned = (await gw.hosts()).hosts.find((h) => h.name === 'held')?.decode_rate?.m;
  assert.equal(learned?.in_use, true, `the node's speed is learned and shown: ${JSON.stringify(learned)}`);
  assert.ok(learned.tokens_per_second > 0 && learned.first_token_ms !== null);
  // The client leaves 3 s (the gateway's clock) after the node was sent the request: about 2.5 s of
  // generation at about 39 tokens a second.
  const rated = await leaveEarly(
    'rated',
    { model: 'm', max_tokens: 200, stream: true, messages: [{ role: 'user', content: PROMPT }] },
    async () => {
      if (!(await atNode(1)())) return false;
      gatewayClock.jump(3_000);
      return true;
    },
  );
  assert.ok(rated.promptTokens > 0, `the prompt is charged: ${rated.promptTokens}`);
  assert.ok(rated.completionTokens > 0, `the generation until the cancel is charged: ${rated.completionTokens}`);
  assert.ok(rated.completionTokens <= 200, `never more than max_tokens: ${rated.completionTokens}`);
  const line = await lastLine('rated');
  assert.equal(line?.status, 499);
  assert.equal(line?.tokens_from, 'estimated');
  assert.equal(line?.estimated_from, 'decode_rate');
  assert.equal(line?.completion_tokens, rated.completionTokens);
  // The same 3 s against max_tokens 10: the whole of what the request allowed, no more.
  const capped = await leaveEarly(
    'capped',
    { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: PROMPT }] },
    async () => {
      if (!(await atNode(1)())) return false;
      gatewayClock.jump(3_000);
      return true;
    },
  );
  assert.equal(capped.completionTokens, 10, 'capped at max_tokens');
  assert.equal((await lastLine('capped'))?.estimated_from, 'decode_rate');
});
