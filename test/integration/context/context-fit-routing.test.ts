// A prompt goes where it fits, over the real wire: two llama-servers serve the same model id with
// contexts 1024 and 16384; a long prompt must only ever reach the large one (the small one's own
// recording proves it was never asked), short prompts may go to either. When no node that has a
// model loaded can fit a prompt, a router that would load it on demand takes it, judged by the
// context it had when it was last loaded.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { httpJson, simRequests } from '#test/fixtures/http.ts';
import { servedBy } from '#test/fixtures/gateway-state.ts';
import { chatOfTokens, explainOf, waitForHost } from '#test/fixtures/context.ts';

const FLEET = `
[[node]]
name = "small"
kind = "llamacpp"
models = ["shared"]
context = 1024
ttft = "2ms"
tokens_per_second = 1000

[[node]]
name = "big"
kind = "llamacpp"
models = ["shared"]
context = 16384
ttft = "2ms"
tokens_per_second = 1000

[[node]]
name = "narrow"
kind = "llamacpp"
models = ["wide"]
context = 1024
ttft = "2ms"
tokens_per_second = 1000

[[node]]
name = "spare"
kind = "llamacpp-router"
ttft = "2ms"
tokens_per_second = 1000
load_time = "20ms"

[[node.model]]
id = "wide"
status = "loaded"
context = 32768
`;

/** Content tokens of a prompt too long for 1024 but easy for 16384. */
const LONG = 3000;

let sim: SimFleet;
let gw: GatewayUnderTest;

before(async () => {
  sim = await startSimFleet(FLEET);
  gw = await startGateway(gatewayToml(sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: 'llamacpp' }))));
  await waitForHost(gw, 'small', (h) => h.models?.shared?.n_ctx === 1024, 'context known');
  await waitForHost(gw, 'big', (h) => h.models?.shared?.n_ctx === 16384, 'context known');
  await waitForHost(gw, 'narrow', (h) => h.models?.wide?.n_ctx === 1024, 'context known');
  await waitForHost(gw, 'spare', (h) => h.models?.wide?.n_ctx === 32768, 'context known while loaded');
});

after(async () => {
  await gw?.close();
  await sim?.close();
});

const chatPosts = async (node: string): Promise<number> =>
  (await simRequests(sim.url(node))).filter((r) => r.method === 'POST' && r.path === '/v1/chat/completions').length;

const resetRecording = (node: string): Promise<unknown> => httpJson('POST', `${sim.url(node)}/__sim/reset`);

test('a long prompt goes only to the node whose context fits it; the small node is never asked', async () => {
  await resetRecording('small');
  await resetRecording('big');
  const answers = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      httpJson('POST', `${gw.url}/v1/chat/completions`, chatOfTokens('shared', LONG, { max_tokens: 4, stream: i % 2 === 0 })),
    ),
  );
  for (const res of answers) {
    assert.equal(res.status, 200, res.text);
    assert.equal(servedBy(res), 'big');
  }
  assert.equal(await chatPosts('small'), 0, 'the 1024-token node never received the long prompt');
  assert.equal(await chatPosts('big'), 6);
});

test('short prompts may go to either node', async () => {
  const served = new Set<string>();
  for (let i = 0; i < 6; i++) {
    const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, chatOfTokens('shared', 5, { max_tokens: 2 }));
    assert.equal(res.status, 200, res.text);
    served.add(servedBy(res) ?? '?');
  }
  assert.deepEqual([...served].sort(), ['big', 'small']);
});

test('when no loaded node fits, a router that would load the model on demand takes it by its last known context', async () => {
  const unload = await httpJson('POST', `${sim.url('spare')}/models/unload`, { model: 'wide' });
  assert.equal(unload.status, 200, unload.text);
  await waitForHost(gw, 'spare', (h) => h.available_on_demand.some((m) => m.id === 'wide'), 'wide seen unloaded');
  await resetRecording('spare');
  await resetRecording('narrow');

  // A short prompt fits the node that has the model loaded: the router is not woken for it.
  const short = await httpJson('POST', `${gw.url}/v1/chat/completions`, chatOfTokens('wide', 5, { max_tokens: 2 }));
  assert.equal(short.status, 200, short.text);
  assert.equal(servedBy(short), 'narrow');
  assert.equal(await chatPosts('spare'), 0);

  const explained = await explainOf(gw.url, `model=wide&prompt_tokens=${LONG + 24}&max_tokens=4`);
  const verdicts = Object.fromEntries(explained.nodes.map((n) => [n.node, n.reason ?? n.verdict]));
  assert.equal(verdicts.narrow, 'too_small');
  assert.equal(verdicts.spare, 'eligible', JSON.stringify(explained));
  assert.equal(explained.outcome, 'route');

  // Beyond even the last known context: refused without waking the router.
  const tooLong = await httpJson('POST', `${gw.url}/v1/chat/completions`, chatOfTokens('wide', 33_000, { max_tokens: 4 }));
  assert.equal(tooLong.status, 400, tooLong.text);
  assert.equal(tooLong.json<{ error: { code: string } }>().error.code, 'context_length_exceeded');
  assert.equal(await chatPosts('spare'), 0, 'the router was not asked to load a model too small for the prompt');

  const narrowBefore = await chatPosts('narrow');
  const long = await httpJson('POST', `${gw.url}/v1/chat/completions`, chatOfTokens('wide', LONG, { max_tokens: 4 }));
  assert.equal(long.status, 200, long.text);
  assert.equal(servedBy(long), 'spare');
  assert.equal(await chatPosts('narrow'), narrowBefore, 'the small node that has the model loaded was not tried');
  const statuses = (await httpJson('GET', `${sim.url('spare')}/v1/models`)).json<{
    data: { id: string; status: { value: string } }[];
  }>();
  assert.equal(statuses.data.find((m) => m.id === 'wide')?.status.value, 'loaded', 'the router loaded it on demand');
});
