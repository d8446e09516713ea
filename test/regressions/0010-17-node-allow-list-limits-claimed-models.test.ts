// Issue 10, item 17: any node could claim any model. A hostile or misconfigured node that added
// {"id":"x"} to its listing received half of model x's prompts, and docs/security.md said it could
// not. Now `[[nodes]] models = [...]` is a per-node allow-list (ids or `*`/`?` patterns): listed ids
// outside it never reach routing, /v1/models, /admin/hosts or capacity polls, and are counted in
// gateway_discovery_limited_total{limit="not_allowed"} and logged once, not once per poll.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '#src/config-tables.ts';
import { Gateway } from '#src/main.ts';
import { capturedLogger } from '#test/fixtures/captured-logs.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { metric } from '#test/fixtures/gateway-state.ts';
import { loadedEntry, startListingNode, type ListingNode } from '#test/fixtures/listing-node.ts';
import { on, untilEvent } from '#test/fixtures/events.ts';

let honest: ListingNode;
let hostile: ListingNode;
let gateway: Gateway;
const { logger, lines } = capturedLogger();

before(async () => {
  honest = await startListingNode({ listing: () => [loadedEntry('llama-1')], router: false });
  // It serves mistral, but also claims llama-1 to draw llama-1's prompts.
  hostile = await startListingNode({ listing: () => [loadedEntry('mistral-7b'), loadedEntry('llama-1')] });
  const toml = [
    '[server]',
    'listen = "127.0.0.1:0"',
    '[discovery]',
    'interval = "100ms"',
    '[[nodes]]',
    'name = "honest"',
    `url = "${honest.url}"`,
    'kind = "vllm"',
    '[[nodes]]',
    'name = "hostile"',
    `url = "${hostile.url}"`,
    'kind = "llamacpp"',
    'models = ["mistral-*"]',
  ].join('\n');
  const loaded = loadConfig(toml, {});
  assert.ok(loaded.ok, JSON.stringify(loaded));
  gateway = await Gateway.start({ config: loaded.config, logger });
  assert.ok(await gateway.firstRoundDone(10_000));
});

after(async () => {
  await gateway?.close();
  await honest?.close();
  await hostile?.close();
});

test("a node's claim to a model outside its allow-list draws none of that model's requests", async () => {
  for (let i = 0; i < 10; i++) {
    const res = await httpJson('POST', `${gateway.url}/v1/chat/completions`, {
      model: 'llama-1',
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(res.status, 200, res.text);
  }
  assert.equal(honest.completions()['llama-1'], 10);
  assert.equal(hostile.completions()['llama-1'] ?? 0, 0);
  const res = await httpJson('POST', `${gateway.url}/v1/chat/completions`, {
    model: 'mistral-7b',
    messages: [{ role: 'user', content: 'hi' }],
  });
  assert.equal(res.status, 200, 'allowed models still go to it');
});

test('the excluded id is not shown, not polled, and is counted and logged once', async () => {
  const models = (await httpJson('GET', `${gateway.url}/v1/models`)).json<{ data: { id: string; nodes: string[] }[] }>().data;
  assert.deepEqual(models.find((m) => m.id === 'llama-1')?.nodes, ['honest']);
  const hosts = (await httpJson('GET', `${gateway.url}/admin/hosts`)).json<{ hosts: { name: string; loaded: string[] }[] }>()
    .hosts;
  assert.deepEqual(hosts.find((h) => h.name === 'hostile')?.loaded, ['mistral-7b']);
  assert.ok(!hostile.askedIds().has('llama-1'), 'never asked /props?model=llama-1');

  await untilEvent(
    () => hostile.polls() >= 3,
    [on(gateway.registry.events, 'node:discovery')],
    'three listings of the hostile node',
  );
  assert.ok((await metric(gateway.url, 'gateway_discovery_limited_total', { node: 'hostile', limit: 'not_allowed' })) >= 2);
  const logged = lines.filter((l) => l.msg === 'model listing limited: entries ignored' && l.node === 'hostile');
  assert.deepEqual(
    logged.map((l) => [l.limit, l.dropped, l.sample]),
    [['not_allowed', 1, ['llama-1']]],
  );
});
