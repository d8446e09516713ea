// The node sources together: the [[nodes]] list first, a clashing name left out with its reason,
// a reload that keeps a source's settings keeps the source (and its last good set), a failed
// request makes a DNS source look again (not sooner than min_ttl), and nothing per request
// without a DNS source.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { NODE_SOURCE_DEFAULTS, type DnsNodeSourceSpec, type GatewayConfig, type NodeSpec } from '#src/config/index.ts';
import { NodeFleet, type DnsAnswer } from '#src/fleet/index.ts';

const staticNode = (name: string): NodeSpec => ({
  name,
  url: `http://127.0.0.1:${9000 + name.length}`,
  apiKey: undefined,
  kind: 'vllm',
  group: undefined,
  kv: 'auto',
  weight: 1,
  wake: undefined,
  wakeTimeoutMs: 120_000,
});

const dnsSpec = (over: Partial<DnsNodeSourceSpec> = {}): DnsNodeSourceSpec => ({
  kind: 'dns',
  name: 'pool',
  query: { type: 'address', host: 'pool.test', port: 8000 },
  scheme: 'http',
  nodeKind: 'vllm',
  group: undefined,
  apiKey: 'secret',
  resolver: undefined,
  ...NODE_SOURCE_DEFAULTS,
  ...over,
});

const configOf = (nodes: NodeSpec[], sources: DnsNodeSourceSpec[]): GatewayConfig =>
  ({ nodes, nodeSources: sources }) as unknown as GatewayConfig;

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

function rig(records: string[]) {
  const clock = new ManualClock();
  const asked: { count: number; answer: DnsAnswer } = {
    count: 0,
    answer: { ok: true, records: records.map((address) => ({ address, port: 8000, ttlMs: 60_000 })) },
  };
  const changed: string[] = [];
  const failures: ((node: NodeSpec | undefined) => void)[] = [];
  const fleet = new NodeFleet(
    {
      clock,
      lookup: async () => {
        asked.count += 1;
        return asked.answer;
      },
      onNodes: (source) => changed.push(source),
      followFailures: (listener) => failures.push(listener),
      log: () => {},
    },
    configOf([staticNode('a')], [dnsSpec()]),
  );
  return { clock, asked, changed, failures, fleet };
}

test('the [[nodes]] list first, then each source; a DNS node gets the source, its api key and the defaults', async () => {
  const { fleet, changed } = rig(['127.0.0.2']);
  assert.deepEqual(
    fleet.nodes().map((n) => n.name),
    ['a'],
  );
  fleet.start();
  await settle();
  assert.deepEqual(changed, ['pool']);
  const nodes = fleet.nodes();
  assert.deepEqual(
    nodes.map((n) => [n.name, n.source]),
    [
      ['a', undefined],
      ['pool-127.0.0.2-8000', 'pool'],
    ],
  );
  assert.equal(nodes[1]?.apiKey, 'secret');
  assert.deepEqual(
    fleet.reports().map((r) => [r.name, r.kind, r.ok, r.nodes, r.changes]),
    [
      ['static', 'static', true, 1, 0],
      ['pool', 'dns', true, 1, 1],
    ],
  );
  fleet.stop();
});

test('a name a source already gave is left out of a later one, with the reason', async () => {
  const { fleet } = rig(['127.0.0.2']);
  fleet.configure(configOf([staticNode('pool-127.0.0.2-8000')], [dnsSpec()]));
  fleet.start();
  await settle();
  assert.deepEqual(
    fleet.nodes().map((n) => n.name),
    ['pool-127.0.0.2-8000'],
  );
  assert.equal(fleet.nodes()[0]?.source, undefined, 'the [[nodes]] entry keeps the name');
  assert.deepEqual(fleet.reports()[1]?.left_out, [
    { node: 'pool-127.0.0.2-8000', source: 'pool', reason: "the name is already taken by a node of source 'static'" },
  ]);
  fleet.stop();
});

test('a reload with the same source settings keeps the source and its set; changed settings look again', async () => {
  const { fleet, asked } = rig(['127.0.0.2']);
  fleet.start();
  await settle();
  assert.equal(asked.count, 1);
  asked.answer = { ok: false, reason: 'down' };
  fleet.configure(configOf([staticNode('b')], [dnsSpec()]));
  await settle();
  assert.equal(asked.count, 1, 'kept: no new look');
  assert.deepEqual(
    fleet.nodes().map((n) => n.name),
    ['b', 'pool-127.0.0.2-8000'],
  );
  assert.equal(fleet.reports()[0]?.changes, 1, "the [[nodes]] list's change is counted");
  fleet.configure(configOf([staticNode('b')], [dnsSpec({ group: 'other' })]));
  await settle();
  assert.equal(asked.count, 2, 'rebuilt: it looks at once');
  assert.deepEqual(
    fleet.nodes().map((n) => n.name),
    ['b'],
    'a rebuilt source that cannot answer has no last good set',
  );
  assert.match(fleet.reports()[1]?.last_error ?? '', /down; keeping the last good set/);
  fleet.stop();
});

test('a failed request to a DNS node makes its source look again, not sooner than min_ttl; others are ignored', async () => {
  const { fleet, asked, clock, failures } = rig(['127.0.0.2']);
  fleet.start();
  await settle();
  assert.equal(failures.length, 1, 'failures followed once there is a DNS source');
  const node = fleet.nodes()[1];
  failures[0]?.(node);
  await settle();
  assert.equal(asked.count, 1, 'within min_ttl of the last look: no new look');
  clock.advance(NODE_SOURCE_DEFAULTS.minTtlMs);
  failures[0]?.(fleet.nodes()[0]);
  failures[0]?.(undefined);
  await settle();
  assert.equal(asked.count, 1, 'a [[nodes]] node or an unknown one: no look');
  failures[0]?.(node);
  await settle();
  assert.equal(asked.count, 2);
  fleet.stop();
  failures[0]?.(node);
  clock.advance(10 * NODE_SOURCE_DEFAULTS.maxTtlMs);
  await settle();
  assert.equal(asked.count, 2, 'stopped: no look, no timer');
});

test('without a DNS source nothing follows the requests', () => {
  const failures: unknown[] = [];
  const fleet = new NodeFleet(
    { clock: new ManualClock(), onNodes: () => {}, followFailures: (l) => failures.push(l), log: () => {} },
    configOf([staticNode('a')], []),
  );
  fleet.start();
  assert.equal(failures.length, 0);
  fleet.stop();
});

test('the nodes each change added, removed and moved are counted per source (the metric), and logged with the change', async () => {
  const logged: Record<string, unknown>[] = [];
  const clock = new ManualClock();
  const asked: { answer: DnsAnswer } = {
    answer: { ok: true, records: ['127.0.0.2', '127.0.0.3'].map((address) => ({ address, port: 8000, ttlMs: 1_000 })) },
  };
  const fleet = new NodeFleet(
    { clock, lookup: async () => asked.answer, onNodes: () => {}, log: (_level, fields) => logged.push(fields) },
    configOf([staticNode('a'), staticNode('bb')], [dnsSpec()]),
  );
  const counts = (): string[] => fleet.nodeChanges().map((c) => `${c.source} ${c.change} ${c.count}`);
  fleet.start();
  await settle();
  asked.answer = { ok: true, records: ['127.0.0.3', '127.0.0.4'].map((address) => ({ address, port: 8000, ttlMs: 1_000 })) };
  clock.advance(NODE_SOURCE_DEFAULTS.maxTtlMs);
  await settle();
  // A reload: 'a' moves to another URL, 'bb' leaves, 'c' arrives.
  fleet.configure(configOf([{ ...staticNode('a'), url: 'http://127.0.0.1:1' }, staticNode('c')], [dnsSpec()]));
  assert.deepEqual(counts(), [
    'static added 1',
    'static removed 1',
    'static moved 1',
    'pool added 3',
    'pool removed 1',
    'pool moved 0',
  ]);
  assert.deepEqual(
    logged.filter((l) => l['source'] === 'pool').map((l) => [l['added'], l['removed'], l['moved']]),
    [
      [2, 0, 0],
      [1, 1, 0],
    ],
  );
  fleet.stop();
});
