// Issue 45: nodes from Kubernetes, through a whole gateway. The API server stand-in (in process, on
// loopback, reached through the official client library with a kubeconfig) holds one Service's
// EndpointSlices; simulated vLLM pods listen on 127.0.0.2-4 at one port. Ready pods are nodes named
// by their pod and shown with their source; a pod that starts terminating drains (its running stream
// finishes, nothing new goes there, its lease is returned); a pod that turns ready is served; a watch
// that breaks resumes, a 410 relists, and the API refusing keeps the last good set with its reason.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFleetConfig, startSimNode, type SimNode } from '#src/sim/index.ts';
import { startGateway, type GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import { chat, servedBy } from '#test/fixtures/gateway-state.ts';
import { onEmitter, untilEvent } from '#test/fixtures/events.ts';
import { logLines } from '#test/fixtures/gateway-waits.ts';
import { unusedPort } from '#test/fixtures/context.ts';
import { metricsText } from '#test/fixtures/admin-readers.ts';
import { startK8sApi, type K8sApiStandIn, type StandInEndpoint } from '#test/fixtures/k8s-api-server.ts';
import { streamAcrossRemoval } from '#test/fixtures/node-source-removal.ts';

async function startSim(name: string, host: string, port: number, model: string, tokensPerSecond = 1000): Promise<SimNode> {
  const parsed = parseFleetConfig(
    `[[node]]\nname = "${name}"\nkind = "vllm"\nport = ${port}\nmodels = ["${model}"]\nttft = "2ms"\ntokens_per_second = ${tokensPerSecond}\n`,
  );
  if (!parsed.ok) throw new Error(parsed.problems.map((p) => p.message).join('; '));
  return startSimNode(parsed.spec.nodes[0]!, { host });
}

function config(kubeconfig: string): string {
  return `[server]
listen = "127.0.0.1:0"

[health]
interval = "100ms"
timeout = "2s"

[discovery]
interval = "1h"
timeout = "3s"
miss_wait = "5s"
miss_cooldown = "0s"

[[node_sources]]
kind = "kubernetes"
name = "k8s"
namespace = "models"
service = "vllm"
port_name = "http"
node_kind = "vllm"
kubeconfig = "${kubeconfig}"
timeout = "2s"
`;
}

function slice(api: K8sApiStandIn, port: number, endpoints: StandInEndpoint[]): void {
  api.apply({
    name: 'vllm-abc12',
    service: 'vllm',
    ports: [
      { name: 'metrics', port: 9 },
      { name: 'http', port },
    ],
    endpoints,
  });
}

const names = async (gw: GatewayUnderTest): Promise<string[]> => (await gw.hosts()).hosts.map((h) => h.name).sort();

test('Kubernetes node source: pods are nodes; a terminating pod drains its stream; a ready one is served; the watch survives breaks and 410', async (t) => {
  const port = await unusedPort();
  const sims: SimNode[] = [];
  t.after(async () => {
    await Promise.all(sims.map((s) => s.close()));
  });
  const [a, b, c] = [
    await startSim('a', '127.0.0.2', port, 'm-a', 20),
    await startSim('b', '127.0.0.3', port, 'm-b'),
    await startSim('c', '127.0.0.4', port, 'm-c'),
  ];
  sims.push(a, b, c);
  const api = await startK8sApi();
  t.after(() => api.close());
  slice(api, port, [
    { ip: '127.0.0.2', pod: 'vllm-0' },
    { ip: '127.0.0.3', pod: 'vllm-1' },
    { ip: '127.0.0.4', pod: 'vllm-2', ready: false },
  ]);
  const gw = await startGateway(config(await api.kubeconfig()));
  t.after(() => gw.close());
  const until = (check: () => Promise<boolean>, what: string): Promise<void> =>
    untilEvent(check, [logLines(gw), onEmitter(api, 'stand-in', 'request', 'watch', 'sent', 'closed')], what, {
      timeoutMs: 60_000,
    });

  // The ready pods are nodes named <source>-<pod>, shown with their source in the hosts view and explain.
  await until(async () => (await names(gw)).join() === 'k8s-vllm-0,k8s-vllm-1', 'the two ready pods to be nodes');
  const hosts = await gw.hosts();
  assert.deepEqual(hosts.hosts.map((h) => [h.name, h.source, h.url]).sort(), [
    ['k8s-vllm-0', 'k8s', `http://127.0.0.2:${port}`],
    ['k8s-vllm-1', 'k8s', `http://127.0.0.3:${port}`],
  ]);
  const row = hosts.node_sources?.find((s) => s.name === 'k8s');
  assert.deepEqual([row?.kind, row?.ok, row?.nodes], ['kubernetes', true, 2]);
  assert.equal(servedBy(await chat(gw.url, 'm-b')), 'k8s-vllm-1', 'a pod is discovered and served');
  assert.deepEqual((await gw.explain('model=m-b')).nodes.map((n) => [n.node, n.source]).sort(), [
    ['k8s-vllm-0', 'k8s'],
    ['k8s-vllm-1', 'k8s'],
  ]);

  // vllm-0 starts terminating (still serving, as a pod in its grace period) while it streams: it drains.
  await streamAcrossRemoval({
    gw,
    model: 'm-a',
    node: 'k8s-vllm-0',
    sim: a,
    remove: async () => {
      slice(api, port, [
        { ip: '127.0.0.2', pod: 'vllm-0', ready: false, serving: true, terminating: true },
        { ip: '127.0.0.3', pod: 'vllm-1' },
        { ip: '127.0.0.4', pod: 'vllm-2', ready: false },
      ]);
      await until(async () => (await names(gw)).join() === 'k8s-vllm-1', 'the terminating pod to leave');
    },
  });

  // The watch breaks; meanwhile vllm-2 turns ready: the resumed watch brings it, and it is served.
  const lists = (): number => api.requests.filter((r) => r.query.get('watch') === null).length;
  const listed = lists();
  api.deaf = true;
  slice(api, port, [
    { ip: '127.0.0.3', pod: 'vllm-1' },
    { ip: '127.0.0.4', pod: 'vllm-2' },
  ]);
  api.deaf = false;
  api.breakWatches();
  await until(async () => (await names(gw)).join() === 'k8s-vllm-1,k8s-vllm-2', 'the resumed watch to bring vllm-2');
  assert.equal(lists(), listed, 'resumed from its resourceVersion, not listed again');
  assert.equal(servedBy(await chat(gw.url, 'm-c')), 'k8s-vllm-2');
  assert.equal(servedBy(await chat(gw.url, 'm-b')), 'k8s-vllm-1', 'the pod that stayed kept its name');

  // The history is compacted while the watch is away: 410 Gone, a relist, and vllm-0 is back.
  api.deaf = true;
  slice(api, port, [
    { ip: '127.0.0.2', pod: 'vllm-0' },
    { ip: '127.0.0.3', pod: 'vllm-1' },
    { ip: '127.0.0.4', pod: 'vllm-2' },
  ]);
  api.compact();
  api.deaf = false;
  api.breakWatches();
  await until(async () => (await names(gw)).length === 3, 'the relist after 410 to bring vllm-0 back');
  assert.ok(lists() > listed, 'listed again after 410');
  assert.equal(servedBy(await chat(gw.url, 'm-a')), 'k8s-vllm-0');

  // The API refuses (RBAC taken away): the last good set is kept, and the hosts view says why.
  api.failNext(1_000, 403, 'endpointslices.discovery.k8s.io is forbidden');
  api.breakWatches();
  await until(async () => (await gw.hosts()).node_sources?.some((s) => s.name === 'k8s' && !s.ok) ?? false, 'the failure shown');
  const failing = (await gw.hosts()).node_sources?.find((s) => s.name === 'k8s');
  assert.match(
    failing?.last_error ?? '',
    /watch: HTTP 403 403 Forbidden: endpointslices\.discovery\.k8s\.io is forbidden; keeping the last good set/,
  );
  assert.equal((await names(gw)).length, 3, 'the fleet is not emptied');
  assert.equal(servedBy(await chat(gw.url, 'm-c')), 'k8s-vllm-2', 'the kept nodes still serve');
  const metrics = await metricsText(gw.url);
  assert.match(metrics, /gateway_node_source_up\{source="k8s",kind="kubernetes"\} 0\b/);
  // Two pods at first, vllm-2 turned ready, vllm-0 back after the relist; vllm-0 terminating once.
  assert.match(metrics, /gateway_node_source_changes_total\{source="k8s",change="added"\} 4\b/);
  assert.match(metrics, /gateway_node_source_changes_total\{source="k8s",change="removed"\} 1\b/);
});
