// Issue 45: nodes from DNS. A real resolver (dnsmasq, started here on a loopback port) answers a
// name from a hosts file the test rewrites; simulated vLLM nodes listen on 127.0.0.2-4 at one port
// (A records carry no port: the source's `port` gives it). Nodes the name gains are discovered and
// served; a node it loses is drained (its running stream finishes, nothing new goes there, its
// lease is returned) and names are stable (a node that stays keeps its state); a resolver that stops
// answering keeps the last good set, and /admin/hosts and the logs say why. SRV records give each
// target its own port.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFleetConfig, startSimNode, type SimNode } from '#src/sim/index.ts';
import { startGateway, type GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import { chat, logMark, servedBy, simCount } from '#test/fixtures/gateway-state.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { logLines } from '#test/fixtures/gateway-waits.ts';
import { unusedPort } from '#test/fixtures/context.ts';
import { metricsText, type HostView } from '#test/fixtures/admin-readers.ts';
import type { NodeSourceRow } from '#src/admin/index.ts';
import { dnsmasqMissing, startDnsmasq } from '#test/fixtures/dnsmasq.ts';
import { streamAcrossRemoval } from '#test/fixtures/node-source-removal.ts';

const skip = dnsmasqMissing();

async function startSim(name: string, host: string, port: number, model: string, tokensPerSecond = 1000): Promise<SimNode> {
  const parsed = parseFleetConfig(
    `[[node]]\nname = "${name}"\nkind = "vllm"\nport = ${port}\nmodels = ["${model}"]\nttft = "2ms"\ntokens_per_second = ${tokensPerSecond}\n`,
  );
  if (!parsed.ok) throw new Error(parsed.problems.map((p) => p.message).join('; '));
  return startSimNode(parsed.spec.nodes[0]!, { host });
}

function config(query: string, resolver: string, workers = 1): string {
  return `[server]
listen = "127.0.0.1:0"
workers = ${workers}

[health]
interval = "100ms"
timeout = "2s"

[discovery]
interval = "1h"
timeout = "3s"
miss_wait = "5s"
miss_cooldown = "0s"

[[node_sources]]
kind = "dns"
name = "pool"
${query}
node_kind = "vllm"
resolver = "${resolver}"
interval = "150ms"
min_ttl = "100ms"
max_ttl = "1s"
timeout = "500ms"
`;
}

async function hostsDoc(gw: GatewayUnderTest): Promise<{ hosts: HostView[]; sources: NodeSourceRow[] }> {
  const doc = await gw.hosts();
  return { hosts: [...doc.hosts], sources: [...(doc.node_sources ?? [])] };
}

function untilHosts(
  gw: GatewayUnderTest,
  check: (doc: Awaited<ReturnType<typeof hostsDoc>>) => boolean,
  what: string,
): Promise<void> {
  return untilEvent(async () => check(await hostsDoc(gw)), [logLines(gw)], what);
}

const names = (doc: Awaited<ReturnType<typeof hostsDoc>>): string[] => doc.hosts.map((h) => h.name).sort();

for (const workers of [1, 2]) {
  test(
    `DNS node source (${workers} request plane${workers > 1 ? 's: workers' : ''}): nodes added and removed (drained) as the name changes; a resolver down keeps the last good set`,
    { skip },
    async (t) => {
      const port = await unusedPort();
      const sims = new Map<string, SimNode>();
      t.after(async () => {
        await Promise.all([...sims.values()].map((s) => s.close()));
      });
      sims.set('a', await startSim('a', '127.0.0.2', port, 'm-a', 20));
      sims.set('b', await startSim('b', '127.0.0.3', port, 'm-b'));
      sims.set('c', await startSim('c', '127.0.0.4', port, 'm-c'));
      const dns = await startDnsmasq(['127.0.0.2 pool.test', '127.0.0.3 pool.test']);
      t.after(() => dns.stop());
      const gw = await startGateway(config(`host = "pool.test"\nport = ${port}`, dns.address, workers));
      t.after(() => gw.close());
      const [na, nb, nc] = ['127.0.0.2', '127.0.0.3', '127.0.0.4'].map((ip) => `pool-${ip}-${port}`);

      // The name's two addresses are two nodes, named <source>-<address>-<port>, shown with their source.
      await untilHosts(gw, (doc) => names(doc).join() === [na, nb].join(), 'the two addresses to be nodes');
      const first = await hostsDoc(gw);
      assert.deepEqual(first.hosts.map((h) => [h.name, h.source, h.url]).sort(), [
        [na, 'pool', `http://127.0.0.2:${port}`],
        [nb, 'pool', `http://127.0.0.3:${port}`],
      ]);
      const row = first.sources.find((s) => s.name === 'pool');
      assert.equal(row?.ok, true);
      assert.equal(row?.nodes, 2);
      assert.equal(servedBy(await chat(gw.url, 'm-b')), nb, 'a DNS node is discovered and served');
      const explained = (await gw.explain('model=m-b')).nodes.map((n) => [n.node, n.source]);
      assert.deepEqual(explained.sort(), [
        [na, 'pool'],
        [nb, 'pool'],
      ]);

      // A long answer from a is running when a leaves the name and c joins it: it finishes, a gets nothing new, leases return.
      const bChatsBefore = await simCount(sims.get('b')!.url, '/v1/chat/completions');
      await streamAcrossRemoval({
        gw,
        model: 'm-a',
        node: na!,
        sim: sims.get('a')!,
        remove: async () => {
          await dns.setHosts(['127.0.0.3 pool.test', '127.0.0.4 pool.test']);
          await untilHosts(gw, (doc) => names(doc).join() === [nb, nc].join(), 'a to leave and c to join');
        },
      });
      // The arrived node is discovered like any other; the one that stayed kept its name and state.
      assert.equal(servedBy(await chat(gw.url, 'm-c')), nc);
      assert.equal(servedBy(await chat(gw.url, 'm-b')), nb);
      assert.equal(await simCount(sims.get('b')!.url, '/v1/chat/completions'), bChatsBefore + 1);

      // The resolver goes down: the last good set is kept, /admin/hosts and the log say why.
      const mark = logMark(gw);
      await dns.kill();
      await untilHosts(gw, (doc) => doc.sources.some((s) => s.name === 'pool' && !s.ok), 'the source to report its failure');
      const down = await hostsDoc(gw);
      assert.deepEqual(names(down), [nb, nc], 'the fleet is not emptied');
      const failing = down.sources.find((s) => s.name === 'pool');
      assert.match(failing?.last_error ?? '', /A\/AAAA pool\.test at 127\.0\.0\.1:\d+ failed: .*keeping the last good set/);
      const warned = gw
        .logs()
        .slice(mark)
        .find((l) => l.msg === 'node source failed; its last good nodes are kept');
      assert.equal(warned?.['source'], 'pool');
      assert.match(String(warned?.['reason']), /failed/);
      assert.equal(servedBy(await chat(gw.url, 'm-c')), nc, 'the kept nodes still serve');

      // It answers again: the source is ok, and the nodes each change added and removed are counted per source.
      await dns.restart();
      await untilHosts(gw, (doc) => doc.sources.some((s) => s.name === 'pool' && s.ok), 'the source to answer again');
      const metrics = await metricsText(gw.url);
      assert.match(metrics, /gateway_node_source_changes_total\{source="pool",change="added"\} 3\b/);
      assert.match(metrics, /gateway_node_source_changes_total\{source="pool",change="removed"\} 1\b/);
      assert.match(metrics, /gateway_node_source_changes_total\{source="pool",change="moved"\} 0\b/);
      assert.equal(down.sources.find((s) => s.name === 'pool')?.changes, 2, 'two changes of the set');
      assert.match(await metricsText(gw.url), /gateway_node_source_up\{source="pool",kind="dns"\} 1\b/);
    },
  );
}

test('DNS node source with an SRV record: each target at its own port', { skip }, async (t) => {
  const [p1, p2] = [await unusedPort(), await unusedPort()];
  const one = await startSim('one', '127.0.0.2', p1, 'm-one');
  t.after(() => one.close());
  const two = await startSim('two', '127.0.0.3', p2, 'm-two');
  t.after(() => two.close());
  const dns = await startDnsmasq(
    ['127.0.0.2 one.pool.test', '127.0.0.3 two.pool.test'],
    [`_http._tcp.pool.test,one.pool.test,${p1}`, `_http._tcp.pool.test,two.pool.test,${p2}`],
  );
  t.after(() => dns.stop());
  const gw = await startGateway(config('srv = "_http._tcp.pool.test"', dns.address));
  t.after(() => gw.close());
  const expected = [`pool-127.0.0.2-${p1}`, `pool-127.0.0.3-${p2}`];
  await untilHosts(gw, (doc) => names(doc).join() === expected.join(), 'both SRV targets to be nodes');
  assert.equal(servedBy(await chat(gw.url, 'm-two')), expected[1]);
  assert.equal(servedBy(await chat(gw.url, 'm-one')), expected[0]);
});
