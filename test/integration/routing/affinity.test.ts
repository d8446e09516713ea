// affinity over the real wire: a session keeps its node across 100 requests, a node leaving moves
// only its own sessions (about 1/N), and one hot session never pushes a node past the load bound.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { waitForHost } from '#test/fixtures/context.ts';

const NAMES = ['n0', 'n1', 'n2', 'n3'];
const node = (name: string): string => `
[[node]]
name = "${name}"
kind = "vllm"
models = ["m"]
ttft = "1ms"
tokens_per_second = 40
`;

let fleet: FleetAndGateway;
const ROUTING = '[routing]\npolicy = "affinity"\n';
const configFor = (names: readonly string[]): string =>
  gatewayToml(
    fleet.sim.nodes.filter((n) => names.includes(n.name)).map((n) => ({ name: n.name, url: n.url, kind: 'vllm' })),
    ROUTING,
  );

before(async () => {
  fleet = await startFleetAndGateway(NAMES.map(node).join(''), (sim) =>
    gatewayToml(
      sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: 'vllm' })),
      ROUTING,
    ),
  );
  for (const name of NAMES) await waitForHost(fleet.gw, name, (h) => h.loaded.includes('m'), 'listed');
});

after(() => fleet.close());

async function ask(session: string, maxTokens = 1): Promise<{ node: string; route: string }> {
  const res = await httpJson(
    'POST',
    `${fleet.gw.url}/v1/chat/completions`,
    { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: maxTokens },
    { 'x-session-id': session },
  );
  assert.equal(res.status, 200, res.text);
  return { node: String(res.headers['x-switchyard-node']), route: String(res.headers['x-switchyard-route']) };
}

test('the same session lands on the same node across 100 requests', async () => {
  const answers = [];
  for (let i = 0; i < 100; i += 1) answers.push(await ask('session-7'));
  assert.equal(new Set(answers.map((a) => a.node)).size, 1, answers.map((a) => a.node).join(','));
  assert.match(answers[0]?.route ?? '', /^affinity; key home node \(bound \d+\)$/);
});

test('one hot session never pushes a node past ceil((1 + 0.25) x average in flight)', async () => {
  // Twelve at once (each ~1 s long), all with one key: they may not all pile onto its node.
  const answers = await Promise.all(Array.from({ length: 12 }, () => ask('hot', 40)));
  const perNode = Object.values(Object.groupBy(answers, (a) => a.node)).map((list) => list?.length ?? 0);
  assert.ok(Math.max(...perNode) <= Math.ceil((1.25 * 12) / 4), `per node: ${perNode.join(',')}`);
  assert.ok(
    answers.some((a) => a.route.includes('full')),
    'the spill says so in x-switchyard-route',
  );
});

test('a node leaving moves only its own sessions, about 1/N of them', async () => {
  const sessions = Array.from({ length: 80 }, (_, i) => `user-${i}`);
  const before = new Map<string, string>();
  for (const s of sessions) before.set(s, (await ask(s)).node);
  const reloaded = await fleet.gw.reload(configFor(['n0', 'n1', 'n2']));
  assert.ok(reloaded.ok);
  let moved = 0;
  for (const s of sessions) {
    const now = (await ask(s)).node;
    if (now !== before.get(s)) {
      moved += 1;
      assert.equal(before.get(s), 'n3', `${s} moved from ${before.get(s)} although its node stayed`);
    }
  }
  const onN3 = [...before.values()].filter((n) => n === 'n3').length;
  assert.equal(moved, onN3, 'every session of the removed node moved, no other');
  assert.ok(moved <= 80 * 0.45, `${moved} of 80 sessions moved (about 1/4 expected)`);
});
