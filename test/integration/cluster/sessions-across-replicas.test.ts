// Sessions are kept across [cluster] replicas (issue 40, item 3): two replicas on one real
// redis-server in front of 3 llama.cpp nodes. A session that moved on replica A (its node went
// down) is kept on its new node when its next turn lands on replica B — also once the old node is
// back —, and a previous_response_id of an answer A passed on goes back to that answer's node at B;
// a store that does not answer (paused) fails no request: each replica keeps its own table.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startReplicas, type Replicas } from '#test/fixtures/cluster-replicas.ts';
import { waitForHost } from '#test/fixtures/context.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';

const NAMES = ['n0', 'n1', 'n2'];
const node = (name: string): string =>
  `[[node]]\nname = "${name}"\nkind = "llamacpp"\nmodels = ["m"]\ncontext = 32768\nslots = 4\nttft = "2ms"\ntokens_per_second = 2000\n`;
const SESSION = '3f1d2c4b-9a8e-4f7d-b6c5-1e2d3c4b5a69';

let sim: SimFleet | undefined;
let replicas: Replicas | undefined;

before(async () => {
  sim = await startSimFleet(NAMES.map(node).join(''));
  const fleet = sim;
  replicas = await startReplicas({
    count: 2,
    nodes: NAMES.map((name) => ({ name, url: fleet.url(name), kind: 'llamacpp' })),
  });
  for (const gw of replicas.gateways)
    for (const name of NAMES) await waitForHost(gw, name, (h) => h.loaded.includes('m'), 'listed');
});
after(async () => {
  await replicas?.close();
  await sim?.close();
});

function replica(i: number): GatewayUnderTest {
  const gw = replicas?.gateways[i];
  assert.ok(gw !== undefined);
  return gw;
}

interface Turn {
  readonly node: string;
  readonly route: string;
  readonly text: string;
}

async function turn(gw: GatewayUnderTest, n: number): Promise<Turn> {
  const res = await httpJson(
    'POST',
    `${gw.url}/v1/chat/completions`,
    { model: 'm', max_tokens: 4, messages: [{ role: 'user', content: `turn ${n}` }] },
    { 'x-claude-code-session-id': SESSION },
  );
  assert.equal(res.status, 200, res.text);
  return { node: String(res.headers['x-switchyard-node']), route: String(res.headers['x-switchyard-route']), text: res.text };
}

test('a session moved on replica A is kept on its new node when its next turn lands on replica B', async () => {
  assert.ok(sim !== undefined);
  const a = replica(0);
  const b = replica(1);
  const home = (await turn(a, 0)).node;
  assert.equal((await turn(b, 1)).node, home, 'placed by the same hash on both replicas');

  // Its node goes down (both replicas see it): A moves the session.
  sim.node(home).setFaults({ health: 'fail' });
  for (const gw of [a, b]) await waitForHost(gw, home, (h) => h.health.status === 'dead', 'dead');
  const moved = await turn(a, 2);
  assert.notEqual(moved.node, home);
  assert.equal(moved.route, `least-in-flight; session moved from ${home}: down (x-claude-code-session-id)`);

  // The old node is back: B, which never saw the move, keeps the session where A moved it.
  sim.node(home).setFaults({ health: 'none' });
  for (const gw of [a, b]) await waitForHost(gw, home, (h) => h.health.status === 'healthy', 'healthy');
  for (let n = 3; n < 6; n += 1) {
    const next = await turn(b, n);
    assert.equal(next.node, moved.node, `turn ${n} at B: ${next.route}`);
    assert.match(next.route, /^least-in-flight; session kept on its node \(x-claude-code-session-id, /);
  }
  assert.equal((await turn(a, 6)).node, moved.node, 'and A keeps it there too');
});

test("a previous_response_id of an answer replica A passed on goes back to that answer's node at replica B", async () => {
  const ask = async (gw: GatewayUnderTest, previous: string | undefined): Promise<Turn & { id: string }> => {
    const res = await httpJson('POST', `${gw.url}/v1/responses`, {
      model: 'm',
      input: 'go on',
      max_output_tokens: 2,
      ...(previous === undefined ? {} : { previous_response_id: previous }),
    });
    assert.equal(res.status, 200, res.text);
    const id = [...res.text.matchAll(/"id":"(resp_[^"]+)"/g)].map((m) => m[1] ?? '').at(-1);
    assert.ok(id !== undefined, `no response id in ${res.text.slice(0, 200)}`);
    return {
      node: String(res.headers['x-switchyard-node']),
      route: String(res.headers['x-switchyard-route']),
      text: res.text,
      id,
    };
  };
  const first = await ask(replica(0), undefined);
  const next = await ask(replica(1), first.id);
  assert.equal(next.node, first.node);
  assert.equal(next.route, "least-in-flight; previous response's node");
});

test('a store that does not answer fails no session request: each replica routes by its own table', async () => {
  assert.ok(replicas !== undefined);
  const before = await turn(replica(1), 20);
  replicas.redis.pause();
  try {
    for (const i of [0, 1]) {
      const next = await turn(replica(i), 21 + i);
      assert.equal(next.node, before.node, `replica ${i}: ${next.route}`);
    }
  } finally {
    replicas.redis.resume();
  }
});
