// Issue 21, item 1 regression: without an exact token count the context guard took the prompt's
// UTF-8 byte count as its token count. A 5,000-character English prompt to an Ollama model with
// 4,096 tokens of context got 400 "your request needs 5040 tokens" (the node counts ~1,435), CJK
// worse, and a vLLM node whose /tokenize missed tokenize_timeout had the same fate. Now a refusal
// needs proof: the bytes are an upper bound only, the prompt goes to the node that may fit it and
// that node decides; the gateway's own 400 comes only when a proven lower bound exceeds every
// context, and says "at least".
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { httpJson, setSimFaults, simRequests } from '#test/fixtures/http.ts';
import { servedBy } from '#test/fixtures/gateway-state.ts';
import { waitForHost } from '#test/fixtures/context.ts';
import { chatOfLanguage } from '#test/fixtures/prompt-languages.ts';

const FLEET = `
[[node]]
name = "ollama"
kind = "ollama"
ttft = "1ms"
tokens_per_second = 5000

[[node.model]]
id = "small:latest"
status = "loaded"
context = 4096

[[node]]
name = "vllm"
kind = "vllm"
models = ["busy"]
context = 4096
ttft = "1ms"
tokens_per_second = 5000
`;

let sim: SimFleet;
let gw: GatewayUnderTest;

before(async () => {
  sim = await startSimFleet(FLEET);
  // The vLLM node's tokenizer is too busy to answer within tokenize_timeout.
  await setSimFaults(sim.url('vllm'), { tokenize: 'hang' });
  const nodes = sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: n.name }));
  gw = await startGateway(gatewayToml(nodes, '[routing]\ntokenize_timeout = "100ms"'));
  await waitForHost(gw, 'ollama', (h) => h.models?.['small:latest']?.n_ctx === 4096, 'Ollama context known');
  await waitForHost(gw, 'vllm', (h) => h.models?.busy?.n_ctx === 4096, 'vLLM context known');
});

after(async () => {
  await gw?.close();
  await sim?.close();
});

test('a 5,000-character English prompt is served by an Ollama model with 4,096 tokens of context', async () => {
  const prompt = chatOfLanguage('small:latest', 'english', 1435, { max_tokens: 8 });
  assert.ok(prompt.bytes > 4096, `the prompt is ${prompt.bytes} bytes: more than the context in bytes`);
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, prompt.body);
  assert.equal(res.status, 200, res.text);
  assert.equal(servedBy(res), 'ollama');
  // Ollama has no tokenizer the gateway can ask: nothing proves the prompt fits, and Ollama would cut it silently.
  assert.match(String(res.headers['x-switchyard-context']), /^may-truncate; prompt \d+-\d+ tokens; context 4096$/);
});

test('a CJK prompt of 1,470 characters is served too', async () => {
  const prompt = chatOfLanguage('small:latest', 'cjk', 1470, { max_tokens: 8 });
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, prompt.body);
  assert.equal(res.status, 200, res.text);
  assert.equal(servedBy(res), 'ollama');
});

test('a prompt at 90 % of a vLLM context is served when its tokenizer misses tokenize_timeout', async () => {
  const prompt = chatOfLanguage('busy', 'english', 3700, { max_tokens: 8 });
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, prompt.body);
  assert.equal(res.status, 200, res.text);
  assert.equal(servedBy(res), 'vllm');
});

test('a prompt at 110 % still ends in a clear 400: the node refused it', async () => {
  const prompt = chatOfLanguage('busy', 'english', 4500, { max_tokens: 8 });
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, prompt.body);
  assert.equal(res.status, 400, res.text);
  const { error } = res.json<{ error: { code: string; message: string } }>();
  assert.equal(error.code, 'context_length_exceeded');
  assert.match(error.message, /maximum context length is 4096 tokens/);
});

test('the gateway refuses by itself only with proof, and words the figure as a bound', async () => {
  await httpJson('POST', `${sim.url('vllm')}/__sim/reset`);
  await setSimFaults(sim.url('vllm'), { tokenize: 'hang' });
  // More bytes than 256 (the most any token covers) × 4096: no tokenizer can make it fit.
  const content = 'abcd '.repeat(Math.ceil((256 * 4096 + 1) / 5));
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, {
    model: 'busy',
    max_tokens: 8,
    messages: [{ role: 'user', content }],
  });
  assert.equal(res.status, 400, res.text);
  const { error } = res.json<{ error: { code: string; message: string } }>();
  assert.equal(error.code, 'context_length_exceeded');
  assert.match(error.message, /needs at least \d+ tokens \(at least \d+ in the messages, 8 for the completion\)/, error.message);
  const posts = (await simRequests(sim.url('vllm'))).filter((r) => r.method === 'POST');
  assert.deepEqual(posts, [], 'no node was asked');
});
