// The DNS source's I/O against a real resolver (dnsmasq on a loopback port): A records with their
// TTLs, a name without an address, a resolver that is not there, and a lookup its source stopped.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { NODE_SOURCE_DEFAULTS, type DnsNodeSourceSpec } from '#src/config/index.ts';
import { lookupDns } from '#src/fleet/index.ts';
import { dnsmasqMissing, startDnsmasq } from '#test/fixtures/dnsmasq.ts';
import { unusedPort } from '#test/fixtures/context.ts';

const spec = (host: string, resolverPort: number, timeoutMs = 1_000): DnsNodeSourceSpec => ({
  kind: 'dns',
  name: 'pool',
  query: { type: 'address', host, port: 8000 },
  scheme: 'http',
  nodeKind: 'vllm',
  group: undefined,
  apiKey: undefined,
  resolver: { host: '127.0.0.1', port: resolverPort },
  ...NODE_SOURCE_DEFAULTS,
  timeoutMs,
});

test('A records with their TTLs; a name without an address is a failure that says so', { skip: dnsmasqMissing() }, async (t) => {
  const dns = await startDnsmasq(['127.0.0.2 pool.test', '127.0.0.3 pool.test']);
  t.after(() => dns.stop());
  const answer = await lookupDns(spec('pool.test', dns.port), new AbortController().signal);
  assert.deepEqual(answer, {
    ok: true,
    records: [
      { address: '127.0.0.2', port: 8000, ttlMs: 1000 },
      { address: '127.0.0.3', port: 8000, ttlMs: 1000 },
    ],
  });
  const none = await lookupDns(spec('nobody.test', dns.port), new AbortController().signal);
  assert.deepEqual(none, { ok: false, reason: `A/AAAA nobody.test at 127.0.0.1:${dns.port} answered no address` });
});

test('a resolver that is not there: a failure naming the resolver and the cause', async () => {
  const port = await unusedPort();
  const answer = await lookupDns(spec('pool.test', port, 300), new AbortController().signal);
  assert.equal(answer.ok, false);
  assert.match(!answer.ok ? answer.reason : '', new RegExp(`^A/AAAA pool\\.test at 127\\.0\\.0\\.1:${port} failed: E[A-Z]+`));
});

test('a stopped source cancels its lookup instead of waiting out the timeout', async (t) => {
  // A "resolver" that takes the question and never answers.
  const silent = createSocket('udp4');
  t.after(() => silent.close());
  await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
  let asked = 0;
  const question = new Promise<void>((resolve) =>
    silent.on('message', () => {
      asked += 1;
      resolve();
    }),
  );
  const stop = new AbortController();
  const pending = lookupDns(spec('pool.test', silent.address().port, 600_000), stop.signal);
  await question;
  stop.abort();
  const answer = await pending;
  assert.ok(asked >= 1);
  assert.equal(answer.ok, false);
  assert.match(!answer.ok ? answer.reason : '', /ECANCELLED/);
});
