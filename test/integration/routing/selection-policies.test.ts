// Selection policies over the real wire: [routing] policy, a model's own policy, node weights,
// the x-switchyard-route header and the choice /admin/explain predicts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRandom } from '#src/sim/seeded-random.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { waitForHost } from '#test/fixtures/context.ts';

const node = (name: string): string => `
[[node]]
name = "${name}"
kind = "vllm"
models = ["even", "share"]
ttft = "1ms"
tokens_per_second = 2000
`;

let fleet: FleetAndGateway;

before(async () => {
  fleet = await startFleetAndGateway(
    node('heavy') + node('light'),
    (sim) => {
      const toml = gatewayToml(
        sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: 'vllm' })),
        '[routing]\npolicy = "weighted"\n[[models.available]]\nname = "even"\npolicy = "round-robin"\n[[models.available]]\nname = "share"\n',
      );
      // Weights go on the [[nodes]] tables: heavy takes three shares, light one.
      return toml.replace('name = "heavy"', 'name = "heavy"\nweight = 3');
    },
    { random: seededRandom(42) },
  );
  for (const name of ['heavy', 'light']) await waitForHost(fleet.gw, name, (h) => h.loaded.includes('share'), 'listed');
});

after(() => fleet.close());

async function ask(model: string): Promise<{ node: string; route: string }> {
  const res = await httpJson('POST', `${fleet.gw.url}/v1/chat/completions`, {
    model,
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 2,
  });
  assert.equal(res.status, 200, res.text);
  return { node: String(res.headers['x-switchyard-node']), route: String(res.headers['x-switchyard-route']) };
}

test("a model's own policy wins: round-robin alternates and says so in x-switchyard-route", async () => {
  const answers = [];
  for (let i = 0; i < 6; i += 1) answers.push(await ask('even'));
  const counts = Object.groupBy(answers, (a) => a.node);
  assert.equal(counts['heavy']?.length, 3);
  assert.equal(counts['light']?.length, 3);
  for (const a of answers) assert.match(a.route, /^round-robin; turn [12] of 2$/);
});

test('[routing] policy = "weighted" sends traffic in proportion to node weights', async () => {
  const answers = [];
  for (let i = 0; i < 120; i += 1) answers.push(await ask('share'));
  const heavy = answers.filter((a) => a.node === 'heavy').length;
  assert.ok(heavy >= 75 && heavy <= 105, `heavy (weight 3 of 4) took ${heavy} of 120`);
  assert.match(answers[0]?.route ?? '', /^weighted; weight [13] of 4$/);
});

test('/admin/explain names the policy, its choice and each eligible node score', async () => {
  const explained = await fleet.gw.explain('model=share');
  assert.equal(explained.choice?.policy, 'weighted');
  assert.ok(['heavy', 'light'].includes(explained.choice?.node ?? ''));
  const scores = Object.fromEntries(explained.nodes.map((n) => [n.node, n.score]));
  assert.deepEqual(scores, { heavy: -0.75, light: -0.25 });
  const even = await fleet.gw.explain('model=even');
  assert.equal(even.choice?.policy, 'round-robin');
});
