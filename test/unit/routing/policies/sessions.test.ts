// Sessions keep their node by default (issue 40, item 3): each coding agent's own headers (read as
// the request path reads them) keep its session on one node over 20 turns among 3 nodes, beside 7
// other sessions at c=8; a session moves only when its node is saturated (beyond the bounded-load
// bound) or gone (down, ejected, failed this request, left the fleet), says why, and stays where it
// moved; a previous_response_id goes to the node that produced it; a plain request is the
// policy's own choice, untouched.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { IncomingHttpHeaders } from 'node:http';
import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import { sessionKeyOf } from '#src/proxy/request/affinity-key.ts';
import {
  createPolicy,
  leastInFlight,
  learnResponse,
  sessionFeature,
  SessionTable,
  type PolicyContext,
  type RouteRequest,
  type SelectionPolicy,
} from '#src/routing/index.ts';
import { node, request, snapshotOf, policyContext, NOW } from '#test/fixtures/builders.ts';

const HEADER = 'x-session-id';

/** What each agent sends on every turn of one session (headers and body fields), as their sources show. */
const AGENTS: readonly { name: string; source: string; headers: IncomingHttpHeaders; body: Record<string, unknown> }[] = [
  {
    name: 'Claude Code',
    source: 'x-claude-code-session-id',
    headers: { 'x-claude-code-session-id': '7b0c1e2a-5f44-4d5e-9a51-2f7d3c1a9e10' },
    body: { metadata: { user_id: 'user_abc_account_def_session_7b0c' } },
  },
  {
    name: 'Codex 0.171',
    source: 'session-id',
    headers: { 'session-id': '0199f3a2-codex-thread' },
    body: { prompt_cache_key: '0199f3a2-codex-thread' },
  },
  { name: 'Codex (older)', source: 'session_id', headers: { session_id: '0199f3a2-old' }, body: {} },
  { name: 'Codex body only', source: 'prompt_cache_key', headers: {}, body: { prompt_cache_key: 'pck-1' } },
  {
    name: 'OpenCode',
    source: 'x-session-affinity',
    headers: { 'x-session-affinity': 'ses_5d1e', 'x-session-id': 'ses_5d1e' },
    body: {},
  },
  { name: 'the configured header', source: `header ${HEADER}`, headers: { [HEADER]: 'op-1' }, body: {} },
  { name: 'Anthropic SDK', source: 'metadata.user_id', headers: {}, body: { metadata: { user_id: 'u-7' } } },
  { name: 'OpenAI SDK user', source: 'user', headers: {}, body: { user: 'alice' } },
  { name: 'OpenAI SDK safety_identifier', source: 'safety_identifier', headers: {}, body: { safety_identifier: 'h-9' } },
];

function fleet(names: readonly string[] = ['n0', 'n1', 'n2']): {
  nodes: NodeView[];
  snapshot: (over?: Partial<RoutingSnapshot>) => RoutingSnapshot;
  load: Map<string, number>;
} {
  const nodes = names.map((n) => node(n));
  const load = new Map<string, number>();
  return {
    nodes,
    load,
    snapshot: (over = {}) => ({ ...snapshotOf(nodes), inFlight: (n: string) => load.get(n) ?? 0, ...over }),
  };
}

const sessionRequest = (headers: IncomingHttpHeaders, body: Record<string, unknown>, more: Partial<RouteRequest> = {}) =>
  request('m', { sessionKey: sessionFeature(sessionKeyOf(headers, body, HEADER)), ...more });

const keyed = (id: string, more: Partial<RouteRequest> = {}) => sessionRequest({ 'x-claude-code-session-id': id }, {}, more);

function context(over: Partial<PolicyContext> = {}): PolicyContext {
  return policyContext(() => 0.5, { sessions: new SessionTable(), ...over });
}

test("each agent's session stays on one node for 20 turns among 3 nodes, beside 7 other sessions at c=8", () => {
  for (const agent of AGENTS) {
    assert.equal(sessionKeyOf(agent.headers, agent.body, HEADER)?.source, agent.source, `${agent.name}: its key's source`);
    const policy = createPolicy('least-in-flight', context());
    const { nodes, snapshot, load } = fleet();
    const sessions = [
      { name: agent.name, req: sessionRequest(agent.headers, agent.body) },
      ...Array.from({ length: 7 }, (_, i) => ({ name: `other ${i}`, req: keyed(`other-session-${i}`) })),
    ];
    const homes = new Map<string, Set<string>>();
    for (let turn = 0; turn < 20; turn += 1) {
      // c=8: every session's turn is in flight at once, then all finish.
      for (const s of sessions) {
        const choice = policy.choose(s.req, nodes, snapshot());
        assert.ok(choice !== undefined);
        const name = choice.node.spec.name;
        load.set(name, (load.get(name) ?? 0) + 1);
        homes.set(s.name, (homes.get(s.name) ?? new Set()).add(name));
        if (turn > 0) assert.match(choice.reason, /^session kept on its node/, `${s.name}, turn ${turn + 1}`);
      }
      load.clear();
    }
    for (const [name, seen] of homes) assert.equal(seen.size, 1, `${agent.name}: ${name} went to ${[...seen].join(', ')}`);
    const counts = [...homes.values()].map((s) => [...s][0]);
    for (const n of nodes) assert.ok(counts.filter((c) => c === n.spec.name).length <= 4, 'no node holds more than the bound');
  }
});

test('a session stays while its node is busy but under the bound, and moves when it is saturated, saying so', () => {
  const policy = createPolicy('least-in-flight', context());
  const { nodes, snapshot, load } = fleet();
  const home = policy.choose(keyed('s1'), nodes, snapshot())?.node.spec.name ?? '';
  const others = nodes.map((n) => n.spec.name).filter((n) => n !== home);
  // 2 in flight on its node, 2 elsewhere: bound ceil(1.25 x (4 + 1) / 3) = 3.
  load.set(home, 2);
  load.set(others[0] ?? '', 2);
  const kept = policy.choose(keyed('s1'), nodes, snapshot());
  assert.equal(kept?.node.spec.name, home);
  assert.match(kept?.reason ?? '', /^session kept on its node \(x-claude-code-session-id, 2 in flight, bound 3\)$/);
  // Saturated: 4 in flight there, none elsewhere: bound ceil(1.25 x (4 + 1) / 3) = 3.
  load.clear();
  load.set(home, 4);
  const moved = policy.choose(keyed('s1'), nodes, snapshot());
  assert.ok(moved !== undefined && moved.node.spec.name !== home);
  assert.equal(moved.reason, `session moved from ${home}: saturated (4 in flight, bound 3) (x-claude-code-session-id)`);
  // It stays where it moved, once its old node is idle again: that node holds its longest prefix now.
  load.clear();
  const after = policy.choose(keyed('s1'), nodes, snapshot());
  assert.equal(after?.node.spec.name, moved.node.spec.name);
  assert.match(after?.reason ?? '', /^session kept on its node/);
});

test('a session moves when its node is gone, with the reason: down, ejected, failed this request, left the fleet', () => {
  const cases: [
    string,
    (home: string, all: NodeView[]) => { candidates: NodeView[]; over: Partial<RoutingSnapshot>; req?: Partial<RouteRequest> },
    string,
  ][] = [
    [
      'down',
      (home, all) => ({
        candidates: all.filter((n) => n.spec.name !== home),
        over: { nodes: all.map((n) => (n.spec.name === home ? node(home, { health: 'dead' }) : n)) },
      }),
      'down',
    ],
    [
      'ejected',
      (home, all) => ({
        candidates: all.filter((n) => n.spec.name !== home),
        over: { nodes: all.map((n) => (n.spec.name === home ? { ...n, ejectedUntil: NOW + 10_000 } : n)) },
      }),
      'ejected',
    ],
    [
      'failed this request',
      (home, all) => ({ candidates: all.filter((n) => n.spec.name !== home), over: {}, req: { triedNodes: new Set([home]) } }),
      'failed this request',
    ],
    [
      'left the fleet',
      (home, all) => {
        const rest = all.filter((n) => n.spec.name !== home);
        return { candidates: rest, over: { nodes: rest } };
      },
      'left the fleet',
    ],
    [
      'no longer serves the model',
      (home, all) => ({
        candidates: all.filter((n) => n.spec.name !== home),
        over: { nodes: all.map((n) => (n.spec.name === home ? node(home, { models: ['other'] }) : n)) },
      }),
      'no longer serves the model',
    ],
  ];
  for (const [what, gone, why] of cases) {
    const policy = createPolicy('least-in-flight', context());
    const { nodes, snapshot } = fleet();
    const home = policy.choose(keyed('s2'), nodes, snapshot())?.node.spec.name ?? '';
    const { candidates, over, req } = gone(home, nodes);
    const moved = policy.choose(keyed('s2', req), candidates, snapshot(over));
    assert.ok(moved !== undefined && moved.node.spec.name !== home, what);
    assert.equal(moved.reason, `session moved from ${home}: ${why} (x-claude-code-session-id)`, what);
    // The next turn stays on the node it moved to, the old one back or not.
    const next = policy.choose(keyed('s2'), nodes, snapshot());
    assert.equal(next?.node.spec.name, moved.node.spec.name, `${what}: kept where it moved`);
  }
});

test('sessions are per tenant, forgotten after session_ttl, and a plain request is the policy`s own choice', () => {
  const { nodes, snapshot } = fleet();
  const ctx = context({ sessionTtlMs: () => 60_000 });
  const policy = createPolicy('least-in-flight', ctx);
  const first = policy.choose(keyed('s3', { tenant: { name: 'a', priority: 'standard', weight: 1 } }), nodes, snapshot());
  assert.match(first?.reason ?? '', /^session placed by hash/);
  const otherTenant = policy.choose(keyed('s3', { tenant: { name: 'b', priority: 'standard', weight: 1 } }), nodes, snapshot());
  assert.match(otherTenant?.reason ?? '', /^session placed by hash/, "another tenant's session of the same id is its own");
  const again = policy.choose(keyed('s3', { tenant: { name: 'a', priority: 'standard', weight: 1 } }), nodes, snapshot());
  assert.match(again?.reason ?? '', /^session kept/);
  const later = policy.choose(
    keyed('s3', { tenant: { name: 'a', priority: 'standard', weight: 1 } }),
    nodes,
    snapshot({ now: NOW + 60_001 }),
  );
  assert.match(later?.reason ?? '', /^session placed by hash/, 'forgotten after the ttl');
  // A plain request: the same picks, in the same order, as least-in-flight without sessions.
  const plain = (p: SelectionPolicy): string[] => {
    const f = fleet();
    return Array.from({ length: 12 }, (_, i) => {
      const choice = p.choose(request('m'), f.nodes, f.snapshot());
      const name = choice?.node.spec.name ?? '';
      if (i % 3 !== 0) f.load.set(name, (f.load.get(name) ?? 0) + 1);
      return `${name} ${choice?.reason}`;
    });
  };
  assert.deepEqual(plain(createPolicy('least-in-flight', context())), plain(leastInFlight()));
  assert.ok(plain(createPolicy('least-in-flight', context())).every((p) => / fewest in flight/.test(p)));
});

test('previous_response_id goes to the node that produced that response, busy or not; else the session decides', () => {
  const ctx = context();
  const policy = createPolicy('round-robin', ctx);
  const { nodes, snapshot, load } = fleet();
  learnResponse(ctx, 'default', 'resp_abc', 'n2', NOW);
  load.set('n2', 9);
  const choice = policy.choose(request('m', { previousResponseId: 'resp_abc' }), nodes, snapshot());
  assert.equal(choice?.node.spec.name, 'n2');
  assert.equal(choice?.reason, "previous response's node");
  // Another tenant's response of the same id is not this one's.
  const other = policy.choose(
    request('m', { previousResponseId: 'resp_abc', tenant: { name: 't', priority: 'standard', weight: 1 } }),
    nodes,
    snapshot(),
  );
  assert.match(other?.reason ?? '', /^turn /, 'unknown response: the policy decides');
  // Its node gone: the session decides, and says so.
  const gone = policy.choose(
    keyed('s4', { previousResponseId: 'resp_abc' }),
    nodes.filter((n) => n.spec.name !== 'n2'),
    snapshot({ nodes: nodes.filter((n) => n.spec.name !== 'n2') }),
  );
  assert.match(gone?.reason ?? '', /^previous response's node n2 left the fleet, session placed by hash/);
});

test('the session table is bounded: past its size the least recently used session is forgotten', () => {
  const table = new SessionTable(3);
  for (const [key, n] of [
    [1, 'a'],
    [2, 'b'],
    [3, 'c'],
  ] as const)
    table.set(key, n, 0);
  assert.equal(table.get(1, 0, 10), 'a', 'reading 1 does not refresh it; setting does');
  table.set(1, 'a', 1);
  table.set(4, 'd', 2);
  assert.equal(table.size, 3);
  assert.equal(table.get(2, 2, 10), undefined, 'the least recently set went first');
  assert.equal(table.get(1, 2, 10), 'a');
});
