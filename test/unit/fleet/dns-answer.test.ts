// The DNS answer's pure rules: stable node names, URLs, one node per address and port, and when to look next.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NODE_SOURCE_DEFAULTS, type DnsNodeSourceSpec } from '#src/config/index.ts';
import { NODE_NAME_RULE } from '#src/config/schema-parts.ts';
import { dnsNodeName, nextLookMs, nodesFromRecords } from '#src/fleet/index.ts';

const spec: DnsNodeSourceSpec = {
  kind: 'dns',
  name: 'gpu',
  query: { type: 'address', host: 'vllm.models.svc', port: 8000 },
  scheme: 'http',
  nodeKind: 'vllm',
  group: 'big',
  apiKey: undefined,
  resolver: undefined,
  ...NODE_SOURCE_DEFAULTS,
};

test('node names are <source>-<address>-<port>, valid node names; a long IPv6 name hashes its address, stably', () => {
  assert.equal(dnsNodeName('gpu', '10.0.0.5', 8000), 'gpu-10.0.0.5-8000');
  assert.equal(dnsNodeName('gpu', 'fd00::1', 8000), 'gpu-fd00::1-8000');
  const long = dnsNodeName('a-rather-long-source-nam', 'fd00:1234:5678:9abc:def0:1234:5678:9abc', 65_535);
  assert.ok(long.length <= 64, long);
  assert.match(long, /^a-rather-long-source-nam-[0-9a-f]{16}-65535$/);
  assert.equal(long, dnsNodeName('a-rather-long-source-nam', 'fd00:1234:5678:9abc:def0:1234:5678:9abc', 65_535));
  for (const name of ['gpu-10.0.0.5-8000', 'gpu-fd00::1-8000', long]) assert.ok(NODE_NAME_RULE.test(name), name);
});

test('each address and port once, sorted by name whatever the answer order; IPv6 bracketed in the URL; labels say where from', () => {
  const nodes = nodesFromRecords(spec, [
    { address: '10.0.0.9', port: 8000, ttlMs: 5000 },
    { address: 'fd00::1', port: 8000, ttlMs: 5000 },
    { address: '10.0.0.5', port: 8000, ttlMs: 5000 },
    { address: '10.0.0.9', port: 8000, ttlMs: 1000 },
  ]);
  assert.deepEqual(
    nodes.map((n) => [n.name, n.url]),
    [
      ['gpu-10.0.0.5-8000', 'http://10.0.0.5:8000'],
      ['gpu-10.0.0.9-8000', 'http://10.0.0.9:8000'],
      ['gpu-fd00::1-8000', 'http://[fd00::1]:8000'],
    ],
  );
  assert.deepEqual(nodes[0]?.labels, { source: 'gpu', address: '10.0.0.5', port: '8000' });
  assert.equal(nodes[0]?.kind, 'vllm');
  assert.equal(nodes[0]?.group, 'big');
  const srv = nodesFromRecords({ ...spec, scheme: 'https' }, [
    { address: '10.0.0.5', port: 9000, ttlMs: undefined, target: 'a.svc' },
  ]);
  assert.deepEqual(srv[0]?.labels, { source: 'gpu', address: '10.0.0.5', port: '9000', target: 'a.svc' });
  assert.equal(srv[0]?.url, 'https://10.0.0.5:9000');
});

test('when to look next: the interval, sooner for a shorter TTL, within [min_ttl, max_ttl]; failures back off from min_ttl to the interval', () => {
  const bounds = { ...spec, intervalMs: 30_000, minTtlMs: 5_000, maxTtlMs: 300_000 };
  const ok = (...ttls: (number | undefined)[]) => ({
    ok: true as const,
    records: ttls.map((ttlMs, i) => ({ address: `10.0.0.${i + 1}`, port: 80, ttlMs })),
  });
  const rows: [string, ReturnType<typeof ok> | { ok: false; reason: string }, number, number][] = [
    ['no TTL (SRV)', ok(undefined), 0, 30_000],
    ['a TTL longer than the interval', ok(600_000), 0, 30_000],
    ['a shorter TTL', ok(12_000, 20_000), 0, 12_000],
    ['a TTL of 0 (dnsmasq hosts)', ok(0), 0, 5_000],
    ['the first failure', { ok: false, reason: 'x' }, 1, 5_000],
    ['the second', { ok: false, reason: 'x' }, 2, 10_000],
    ['many', { ok: false, reason: 'x' }, 40, 30_000],
  ];
  for (const [what, answer, failures, expected] of rows) assert.equal(nextLookMs(bounds, answer, failures), expected, what);
  assert.equal(nextLookMs({ ...bounds, intervalMs: 1_000_000 }, ok(600_000), 0), 300_000, 'max_ttl caps it');
});
