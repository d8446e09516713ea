// GET /admin/explain over the real wire: for a model and a prompt size, every configured node with
// its verdict, and for each excluded one the reason, the filter that said it and a detail — the
// same pipeline requests run, so the outcome it predicts is what a request gets.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { chatOfTokens, explainOf, unusedPort, waitForHost } from '#test/fixtures/context.ts';
import type { Explanation } from '#test/fixtures/admin-readers.ts';

const FLEET = `
[[node]]
name = "fit"
kind = "llamacpp"
models = ["ex"]
context = 8192
slots = 1
ttft = "5ms"
tokens_per_second = 100

[[node]]
name = "small"
kind = "llamacpp"
models = ["ex"]
context = 1024

[[node]]
name = "other"
kind = "llamacpp"
models = ["unrelated"]
context = 8192

[[node]]
name = "router"
kind = "llamacpp-router"

[[node.model]]
id = "ex"
status = "unloaded"
`;

const NAMES = ['fit', 'small', 'other', 'router', 'gone'];

let sim: SimFleet;
let gw: GatewayUnderTest;

before(async () => {
  sim = await startSimFleet(FLEET);
  const nodes = sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: 'llamacpp' }));
  nodes.push({ name: 'gone', url: `http://127.0.0.1:${await unusedPort()}`, kind: 'llamacpp' });
  gw = await startGateway(gatewayToml(nodes));
  await waitForHost(gw, 'fit', (h) => h.models?.ex?.n_ctx === 8192, 'context known');
  await waitForHost(gw, 'small', (h) => h.models?.ex?.n_ctx === 1024, 'context known');
  await waitForHost(gw, 'other', (h) => h.loaded.includes('unrelated'), 'listed');
  await waitForHost(gw, 'router', (h) => h.available_on_demand.some((m) => m.id === 'ex'), 'listed');
  await waitForHost(gw, 'gone', (h) => h.health.status === 'dead', 'dead');
});

after(async () => {
  await gw?.close();
  await sim?.close();
});

function verdicts(doc: Explanation): Record<string, string> {
  return Object.fromEntries(doc.nodes.map((n) => [n.node, n.verdict === 'eligible' ? 'eligible' : `${n.reason}`]));
}

function assertEveryNodeExplained(doc: Explanation): void {
  assert.deepEqual(doc.nodes.map((n) => n.node).sort(), [...NAMES].sort(), 'every configured node, once');
  for (const n of doc.nodes) {
    if (n.verdict === 'eligible') continue;
    assert.equal(n.verdict, 'excluded');
    assert.ok(n.reason && n.filter, `${n.node}: reason and filter given (${JSON.stringify(n)})`);
  }
}

test('a prompt that fits one loaded node: it is eligible and every other node says why not', async () => {
  const doc = await explainOf(gw.url, 'model=ex&prompt_tokens=2000&max_tokens=100');
  assertEveryNodeExplained(doc);
  assert.deepEqual(
    { model: doc.model, prompt_tokens: doc.prompt_tokens, max_tokens: doc.max_tokens, outcome: doc.outcome },
    { model: 'ex', prompt_tokens: 2000, max_tokens: 100, outcome: 'route' },
  );
  assert.deepEqual(verdicts(doc), { fit: 'eligible', small: 'too_small', other: 'missing', router: 'not_loaded', gone: 'dead' });
  const small = doc.nodes.find((n) => n.node === 'small');
  assert.equal(small?.detail, 'needs 2100 tokens, context is 1024');
  assert.equal(small?.filter, 'fits-context');
});

test('a short prompt fits both loaded nodes; the unloaded router entry stands by', async () => {
  const doc = await explainOf(gw.url, 'model=ex&prompt_tokens=100');
  assertEveryNodeExplained(doc);
  assert.deepEqual(verdicts(doc), { fit: 'eligible', small: 'eligible', other: 'missing', router: 'not_loaded', gone: 'dead' });
});

test('while the one fitting node is busy the outcome is queue, with its slot reason', async () => {
  const hold = httpJson('POST', `${gw.url}/v1/chat/completions`, chatOfTokens('ex', 1, { max_tokens: 100 }));
  await waitForHost(gw, 'fit', (h) => h.leases.ex?.requests === 1, 'slot leased', 3_000);
  const doc = await explainOf(gw.url, 'model=ex&prompt_tokens=2000&max_tokens=100');
  assertEveryNodeExplained(doc);
  assert.equal(doc.outcome, 'queue');
  assert.equal(verdicts(doc).fit, 'no_slot');
  assert.equal((await hold).status, 200);
});

test('a prompt beyond every loaded context goes to the router entry whose context is unknown', async () => {
  const doc = await explainOf(gw.url, 'model=ex&prompt_tokens=20000');
  assertEveryNodeExplained(doc);
  assert.deepEqual(verdicts(doc), { fit: 'too_small', small: 'too_small', other: 'missing', router: 'eligible', gone: 'dead' });
  assert.equal(doc.outcome, 'route');
});

test('a prompt no node serving the model can fit is context_length_exceeded, even with an unrelated node down', async () => {
  const doc = await explainOf(gw.url, 'model=unrelated&prompt_tokens=20000');
  assertEveryNodeExplained(doc);
  assert.equal(verdicts(doc).other, 'too_small');
  assert.equal(verdicts(doc).gone, 'dead');
  assert.equal(doc.outcome, 'context_length_exceeded', JSON.stringify(doc));
  // The request path agrees with the explanation.
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, chatOfTokens('unrelated', 9000));
  assert.equal(res.status, 400, res.text);
  assert.equal(res.json<{ error: { code: string } }>().error.code, 'context_length_exceeded');
});

test('a model no node lists is no_node_available, and a bad query is a 400', async () => {
  const doc = await explainOf(gw.url, 'model=nowhere&prompt_tokens=10');
  assertEveryNodeExplained(doc);
  assert.equal(doc.outcome, 'no_node_available');
  const bad = await httpJson('GET', `${gw.url}/admin/explain?model=ex&prompt_tokens=lots`);
  assert.equal(bad.status, 400);
  assert.equal(bad.json<{ error: { param: string } }>().error.param, 'prompt_tokens');
});
