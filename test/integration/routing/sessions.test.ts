// Sessions keep their node by default, over the real wire (issue 40, item 3): with no [routing]
// configuration, a Claude-Code-shaped session (its x-claude-code-session-id header, on
// /v1/messages) and a Codex-shaped one (its session-id header and prompt_cache_key, on
// /v1/responses) each stay on one of 3 llama.cpp nodes for 20 turns, beside plain requests that
// still spread; a node stopped mid-session moves its session, which says so in x-switchyard-route
// and /admin/explain, and the session stays where it moved; a previous_response_id goes back to
// the node that produced that answer.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { waitForHost } from '#test/fixtures/context.ts';

const NAMES = ['n0', 'n1', 'n2'];
const node = (name: string): string => `
[[node]]
name = "${name}"
kind = "llamacpp"
models = ["m"]
context = 32768
slots = 4
ttft = "20ms"
prefix_cache_ttft = "2ms"
tokens_per_second = 2000
`;

const CLAUDE_SESSION = '3f1d2c4b-9a8e-4f7d-b6c5-1e2d3c4b5a69';
const CODEX_SESSION = '0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';

let fleet: FleetAndGateway;

before(async () => {
  // No [routing] table: the defaults keep sessions.
  fleet = await startFleetAndGateway(NAMES.map(node).join(''), (sim) =>
    gatewayToml(sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: 'llamacpp' }))),
  );
  for (const name of NAMES) await waitForHost(fleet.gw, name, (h) => h.loaded.includes('m'), 'listed');
});

after(() => fleet.close());

interface Turn {
  readonly node: string;
  readonly route: string;
}

const routed = (res: { status: number; text: string; headers: Record<string, unknown> }): Turn => {
  assert.equal(res.status, 200, res.text);
  return { node: String(res.headers['x-switchyard-node']), route: String(res.headers['x-switchyard-route']) };
};

/** One Claude Code turn: its header on every request, the conversation so far. */
async function claudeTurn(turn: number): Promise<Turn> {
  const messages = Array.from({ length: turn * 2 + 1 }, (_, i) => ({
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: `turn ${Math.floor(i / 2)} ${i % 2 === 0 ? 'asks' : 'answers'}`,
  }));
  const res = await httpJson(
    'POST',
    `${fleet.gw.url}/v1/messages`,
    { model: 'm', max_tokens: 4, system: 'You are Claude Code.', messages, metadata: { user_id: 'user_x_session_y' } },
    { 'x-claude-code-session-id': CLAUDE_SESSION, 'anthropic-version': '2023-06-01' },
  );
  return routed(res);
}

/** One Codex turn: its session-id header and the same id as prompt_cache_key. */
async function codexTurn(turn: number): Promise<Turn> {
  const input = Array.from({ length: turn + 1 }, (_, i) => ({ role: 'user', content: `step ${i}` }));
  const res = await httpJson(
    'POST',
    `${fleet.gw.url}/v1/responses`,
    { model: 'm', instructions: 'You are Codex.', input, max_output_tokens: 4, prompt_cache_key: CODEX_SESSION, store: false },
    { 'session-id': CODEX_SESSION },
  );
  return routed(res);
}

test('a Claude Code session and a Codex session each stay on one node for 20 turns; plain requests are routed as before', async () => {
  const claude: Turn[] = [];
  const codex: Turn[] = [];
  const plain: Turn[] = [];
  for (let turn = 0; turn < 20; turn += 1) {
    const [c, x, p] = await Promise.all([
      claudeTurn(turn),
      codexTurn(turn),
      httpJson('POST', `${fleet.gw.url}/v1/chat/completions`, {
        model: 'm',
        messages: [{ role: 'user', content: 'plain' }],
        max_tokens: 1,
      }).then(routed),
    ]);
    claude.push(c);
    codex.push(x);
    plain.push(p);
  }
  for (const [who, turns, source] of [
    ['claude', claude, 'x-claude-code-session-id'],
    ['codex', codex, 'session-id'],
  ] as const) {
    assert.equal(new Set(turns.map((t) => t.node)).size, 1, `${who}: ${turns.map((t) => t.node).join(',')}`);
    assert.match(turns[0]?.route ?? '', new RegExp(`^least-in-flight; session placed by hash \\(${source}, bound \\d+\\)$`));
    for (const t of turns.slice(1))
      assert.match(t.route, new RegExp(`^least-in-flight; session kept on its node \\(${source}, `));
  }
  // Plain requests are least-in-flight's as before: beside the two sessions, the idle node; alone, in turn.
  assert.ok(plain.every((t) => /^least-in-flight; fewest in flight/.test(t.route)));
  const alone: Turn[] = [];
  for (let i = 0; i < 6; i += 1)
    alone.push(
      routed(
        await httpJson('POST', `${fleet.gw.url}/v1/chat/completions`, {
          model: 'm',
          messages: [{ role: 'user', content: 'plain' }],
          max_tokens: 1,
        }),
      ),
    );
  assert.equal(new Set(alone.map((t) => t.node)).size, 3, `plain requests in turn: ${alone.map((t) => t.node).join(',')}`);
  // The session's key shows in explain by its source and a hash, never its value.
  const explained = await fleet.gw.explain(`model=m&session=${CLAUDE_SESSION}`);
  assert.equal(explained.session?.node, claude[0]?.node);
  assert.equal(explained.session?.verdict, 'kept');
  assert.ok(!JSON.stringify(explained).includes(CLAUDE_SESSION), 'the session id itself is not shown');
});

test('previous_response_id goes back to the node that produced that answer, whole or streamed', async () => {
  const ask = async (previous: string | undefined, stream: boolean): Promise<Turn & { id: string }> => {
    const res = await httpJson('POST', `${fleet.gw.url}/v1/responses`, {
      model: 'm',
      input: 'go on',
      max_output_tokens: 2,
      stream,
      ...(previous === undefined ? {} : { previous_response_id: previous }),
    });
    const turn = routed(res);
    // The whole answer's id, or the one response.completed states in a stream.
    const ids = [...res.text.matchAll(/"id":"(resp_[^"]+)"/g)].map((m) => m[1] ?? '');
    const id = ids.at(-1);
    assert.ok(id !== undefined, `no response id in ${res.text.slice(0, 200)}`);
    return { ...turn, id };
  };
  for (const stream of [false, true]) {
    let last = await ask(undefined, stream);
    const chain = [last];
    for (let i = 0; i < 5; i += 1) {
      last = await ask(last.id, stream);
      chain.push(last);
    }
    const first = chain[0]?.node;
    assert.deepEqual(
      chain.map((t) => t.node),
      chain.map(() => first),
      `stream ${stream}: ${chain.map((t) => t.node).join(',')}`,
    );
    for (const t of chain.slice(1)) assert.equal(t.route, "least-in-flight; previous response's node");
  }
});

test('a node stopped mid-session: the session moves, says why in x-switchyard-route and explain, and stays where it moved', async () => {
  const home = (await claudeTurn(20)).node;
  await fleet.sim.node(home).close();
  await waitForHost(fleet.gw, home, (h) => h.health.status === 'dead', 'dead');
  const explained = await fleet.gw.explain(`model=m&session=${CLAUDE_SESSION}`);
  assert.equal(explained.session?.verdict, 'moved');
  assert.equal(explained.session?.node, home);
  assert.equal(explained.choice?.reason, `session moved from ${home}: down (session query)`);
  const moved = await claudeTurn(21);
  assert.notEqual(moved.node, home);
  assert.equal(moved.route, `least-in-flight; session moved from ${home}: down (x-claude-code-session-id)`);
  const next = [];
  for (let turn = 22; turn < 27; turn += 1) next.push(await claudeTurn(turn));
  assert.deepEqual(
    next.map((t) => t.node),
    next.map(() => moved.node),
  );
  assert.ok(next.every((t) => t.route.startsWith('least-in-flight; session kept on its node')));
});
