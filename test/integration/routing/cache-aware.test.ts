// cache-aware over the real wire: conversations that grow turn by turn keep landing on the node
// their prefix went to, a burst on one prefix spills to other nodes, and the estimated prefix-hit
// rate shows in /metrics and /admin/explain.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { metricSamples, waitForHost } from '#test/fixtures/context.ts';

const NAMES = ['c0', 'c1', 'c2', 'c3'];
const node = (name: string): string => `
[[node]]
name = "${name}"
kind = "vllm"
models = ["m"]
ttft = "1ms"
tokens_per_second = 40
`;

let fleet: FleetAndGateway;

before(async () => {
  fleet = await startFleetAndGateway(NAMES.map(node).join(''), (sim) =>
    gatewayToml(
      sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: 'vllm' })),
      '[routing]\npolicy = "cache-aware"\ncache_balance_abs = 4\n',
    ),
  );
  for (const name of NAMES) await waitForHost(fleet.gw, name, (h) => h.loaded.includes('m'), 'listed');
});

after(() => fleet.close());

type Message = { role: string; content: string };

async function chat(messages: readonly Message[], maxTokens = 1): Promise<string> {
  const res = await httpJson('POST', `${fleet.gw.url}/v1/chat/completions`, { model: 'm', messages, max_tokens: maxTokens });
  assert.equal(res.status, 200, res.text);
  assert.match(String(res.headers['x-switchyard-route']), /^cache-aware; /);
  return String(res.headers['x-switchyard-node']);
}

test('20 conversations growing turn by turn keep landing where their prefix was sent (>= 90 %)', async () => {
  const conversations: Message[][] = Array.from({ length: 20 }, (_, c) => [
    { role: 'system', content: `You are assistant number ${c}, with a long and particular system prompt ${'x'.repeat(c)}.` },
  ]);
  const homes = new Map<number, string>();
  let later = 0;
  let stayed = 0;
  for (let turn = 0; turn < 4; turn += 1) {
    for (const [c, conversation] of conversations.entries()) {
      conversation.push({ role: 'user', content: `question ${turn} of conversation ${c}` });
      const served = await chat(conversation);
      conversation.push({ role: 'assistant', content: `answer ${turn}` });
      if (turn > 0) {
        later += 1;
        if (homes.get(c) === served) stayed += 1;
      }
      homes.set(c, served);
    }
  }
  assert.ok(stayed / later >= 0.9, `${stayed} of ${later} later turns stayed`);
  assert.ok(new Set(homes.values()).size >= 2, 'the conversations do not all share one node');
  const ratio = metricSamples(await fleet.gw.metrics(), 'gateway_cache_aware_prefix_hit_ratio')[0]?.value ?? 0;
  assert.ok(ratio > 0.5, `estimated prefix-hit ratio in /metrics: ${ratio}`);
  const explained = await fleet.gw.explain('model=m');
  assert.equal(explained.choice?.policy, 'cache-aware');
  assert.ok((explained.prefix_hit_rate ?? 0) > 0.5, `prefix_hit_rate in explain: ${explained.prefix_hit_rate}`);
});

test('a burst on one prefix spills to the other nodes instead of overloading its node', async () => {
  const prompt = [{ role: 'system', content: 'One popular prefix that everybody sends, over and over again.' }];
  await chat(prompt);
  // Twenty at once, each about a second long.
  const served = await Promise.all(
    Array.from({ length: 20 }, (_, i) => chat([...prompt, { role: 'user', content: `q${i}` }], 40)),
  );
  const perNode = Object.values(Object.groupBy(served, (n) => n)).map((list) => list?.length ?? 0);
  assert.ok(perNode.length >= 3, `served by ${perNode.length} nodes: ${perNode.join(',')}`);
  assert.ok(Math.max(...perNode) < 20 * 0.6, `one node took ${Math.max(...perNode)} of 20`);
});
