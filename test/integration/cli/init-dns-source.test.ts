// Issue 45: `switchyard init` (the real CLI) given a name that resolves to several addresses — a
// real resolver (dnsmasq on a loopback port, --resolver) answering pool.test with two simulated vLLM
// servers and one address where nothing listens — writes a `[[node_sources]] kind = "dns"` entry
// for the name (each address probed and shown beside it) instead of one node, and the config loads.
// A name of one address stays a node.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '#src/config-tables.ts';
import { parseFleetConfig, startSimNode, type SimNode } from '#src/sim/index.ts';
import { runCliToExit } from '#test/fixtures/processes.ts';
import { unusedPort } from '#test/fixtures/context.ts';
import { dnsmasqMissing, startDnsmasq } from '#test/fixtures/dnsmasq.ts';

const skip = dnsmasqMissing();

async function startSim(name: string, host: string, port: number): Promise<SimNode> {
  const parsed = parseFleetConfig(`[[node]]\nname = "${name}"\nkind = "vllm"\nport = ${port}\nmodels = ["m-${name}"]\n`);
  if (!parsed.ok) throw new Error(parsed.problems.map((p) => p.message).join('; '));
  return startSimNode(parsed.spec.nodes[0]!, { host });
}

test('init: a name of several addresses becomes a DNS node source; a name of one stays a node', { skip }, async (t) => {
  const port = await unusedPort();
  const a = await startSim('a', '127.0.0.2', port);
  t.after(() => a.close());
  const b = await startSim('b', '127.0.0.3', port);
  t.after(() => b.close());
  const dns = await startDnsmasq(['127.0.0.2 pool.test', '127.0.0.3 pool.test', '127.0.0.4 pool.test', '127.0.0.2 one.test']);
  t.after(() => dns.stop());

  const run = await runCliToExit([
    'init',
    `http://pool.test:${port}`,
    `one.test:${port}`,
    '--resolver',
    dns.address,
    '--timeout',
    '2s',
    '--out',
    '-',
  ]);
  assert.equal(run.code, 0, run.stderr);
  const loaded = loadConfig(run.stdout, {});
  assert.ok(loaded.ok, JSON.stringify(loaded));
  assert.deepEqual(
    loaded.config.nodeSources?.map((s) => (s.kind === 'dns' ? [s.name, s.query, s.nodeKind, s.resolver?.port] : [])),
    [['pool', { type: 'address', host: 'pool.test', port }, 'vllm', dns.port]],
  );
  assert.deepEqual(
    loaded.config.nodes.map((n) => [n.name, n.url, n.kind]),
    [['one', `http://one.test:${port}`, 'vllm']],
    'a name of one address is one node',
  );
  assert.match(run.stdout, /^# pool\.test resolves to 3 addresses: a DNS node source follows the name/m);
  assert.match(run.stdout, new RegExp(`^# {3}http://127\\.0\\.0\\.2:${port} {2}vllm`, 'm'));
  assert.match(run.stdout, new RegExp(`^# {3}http://127\\.0\\.0\\.4:${port} {2}not recognised: did not answer`, 'm'));
  assert.match(run.stderr, new RegExp(`^node source pool  dns pool\\.test port ${port}  \\(3 addresses\\)$`, 'm'));
});
