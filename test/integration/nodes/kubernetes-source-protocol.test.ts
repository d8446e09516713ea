// Issue 45: the Kubernetes node source through the official client library (@kubernetes/client-node:
// the kubeconfig read, the bearer token put on) against an API server stand-in on loopback that
// speaks the EndpointSlice list + watch protocol. Pods that turn ready are added, pods removed or
// terminating leave; a watch that breaks resumes from the last resourceVersion (a bookmark's too); a
// 410 Gone (as a watch ERROR event, or as an HTTP answer) lists again; the list is read page by page;
// a failure (403, an oversize event, a missing kubeconfig) keeps the last good set with its reason.

import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { systemClock } from '#src/core/clock.ts';
import { KUBERNETES_SOURCE_DEFAULTS, type KubernetesNodeSourceSpec } from '#src/config/index.ts';
import { NODE_SOURCES, type NodeSource } from '#src/fleet/index.ts';
import { onEmitter, untilEvent, type Trigger } from '#test/fixtures/events.ts';
import { startK8sApi, type K8sApiStandIn, type StandInEndpoint } from '#test/fixtures/k8s-api-server.ts';

function spec(kubeconfig: string, extra: Partial<KubernetesNodeSourceSpec> = {}): KubernetesNodeSourceSpec {
  return {
    kind: 'kubernetes',
    name: 'vllm',
    namespace: 'models',
    service: 'vllm',
    portName: 'http',
    scheme: 'http',
    nodeKind: 'vllm',
    group: undefined,
    apiKey: undefined,
    kubeconfig,
    context: undefined,
    ...KUBERNETES_SOURCE_DEFAULTS,
    ...extra,
  };
}

const PORTS = [
  { name: 'metrics', port: 9090 },
  { name: 'http', port: 8000 },
];

function slice(api: K8sApiStandIn, name: string, endpoints: StandInEndpoint[], service = 'vllm'): void {
  api.apply({ name, service, ports: PORTS, endpoints });
}

interface Rig {
  readonly api: K8sApiStandIn;
  readonly source: NodeSource;
  /** Resolves once `check` holds, looked at again on every source change and every stand-in request or event. */
  until(check: () => boolean, what: string): Promise<void>;
}

async function rig(
  t: TestContext,
  before: (api: K8sApiStandIn) => void,
  extra: Partial<KubernetesNodeSourceSpec> = {},
): Promise<Rig> {
  const api = await startK8sApi();
  t.after(() => api.close());
  before(api);
  const source = NODE_SOURCES['kubernetes']!(spec(await api.kubeconfig(), extra), { clock: systemClock });
  const changes: Trigger = { label: 'source change', subscribe: (listener) => source.onChange(() => listener()) };
  const standIn = onEmitter(api, 'stand-in', 'request', 'watch', 'sent', 'closed');
  source.start();
  t.after(() => source.stop());
  return {
    api,
    source,
    until: (check, what) => untilEvent(check, [changes, standIn], what, { timeoutMs: 30_000 }),
  };
}

const names = (source: NodeSource): string[] => source.nodes().map((n) => n.name);

test('kubernetes source: the list, then the watch: ready pods added, a removed or terminating pod leaves, names are the pods', async (t) => {
  const { api, source, until } = await rig(t, (api) => {
    slice(api, 'vllm-abc', [
      { ip: '10.1.0.1', pod: 'vllm-0' },
      { ip: '10.1.0.2', pod: 'vllm-1' },
      { ip: '10.1.0.3', pod: 'vllm-2', ready: false },
    ]);
    slice(api, 'other-xyz', [{ ip: '10.9.0.1', pod: 'other-0' }], 'other');
  });
  await until(() => names(source).length === 2 && api.openWatches === 1, 'the listed ready pods and an open watch');
  assert.deepEqual(names(source), ['vllm-vllm-0', 'vllm-vllm-1'], "the not-ready pod and the other Service's pod make no node");
  assert.deepEqual(
    source.nodes().map((n) => [n.url, n.labels['pod'], n.labels['namespace']]),
    [
      ['http://10.1.0.1:8000', 'vllm-0', 'models'],
      ['http://10.1.0.2:8000', 'vllm-1', 'models'],
    ],
    'the named port of each pod',
  );
  assert.equal(source.state().ok, true);
  // The library put the kubeconfig's token on; the list asked for this Service's slices, page-limited.
  const list = api.requests.find((r) => r.query.get('watch') === null);
  assert.equal(list?.authorization, 'Bearer stand-in-token');
  assert.equal(list?.query.get('labelSelector'), 'kubernetes.io/service-name=vllm');
  assert.equal(api.requests.find((r) => r.query.get('watch') === 'true')?.query.get('allowWatchBookmarks'), 'true');

  // vllm-2 turns ready, vllm-0 starts terminating (still serving: it drains all the same).
  slice(api, 'vllm-abc', [
    { ip: '10.1.0.1', pod: 'vllm-0', ready: false, serving: true, terminating: true },
    { ip: '10.1.0.2', pod: 'vllm-1' },
    { ip: '10.1.0.3', pod: 'vllm-2' },
  ]);
  await until(() => names(source).join() === 'vllm-vllm-1,vllm-vllm-2', 'vllm-2 in, the terminating vllm-0 out');
  // A second slice of the Service adds its pods; deleting it takes them away again.
  slice(api, 'vllm-def', [{ ip: '10.1.0.4', pod: 'vllm-3' }]);
  await until(() => names(source).includes('vllm-vllm-3'), 'the second slice');
  api.remove('vllm-def');
  await until(() => !names(source).includes('vllm-vllm-3'), 'the deleted slice');
  assert.deepEqual(names(source), ['vllm-vllm-1', 'vllm-vllm-2']);
});

test('kubernetes source: a broken or ended watch resumes from the last resourceVersion (a bookmark moves it); nothing is listed again', async (t) => {
  const { api, source, until } = await rig(t, (api) => slice(api, 'vllm-abc', [{ ip: '10.1.0.1', pod: 'vllm-0' }]));
  await until(() => names(source).length === 1 && api.openWatches === 1, 'the first watch');
  const lists = (): number => api.requests.filter((r) => r.query.get('watch') === null).length;
  assert.equal(lists(), 1);
  // A change through the watch; then its connection drops (a load balancer cut it).
  slice(api, 'vllm-abc', [
    { ip: '10.1.0.1', pod: 'vllm-0' },
    { ip: '10.1.0.2', pod: 'vllm-1' },
  ]);
  await until(() => names(source).length === 2, 'the change through the watch');
  const changed = api.resourceVersion;
  api.breakWatches();
  await until(() => api.watchedFrom.length === 2 && api.openWatches === 1, 'the watch to be resumed');
  assert.equal(api.watchedFrom[1], changed, "resumed from the last event's resourceVersion");
  assert.equal(source.state().ok, true, 'a dropped watch is resumed, not a failure');
  // A bookmark, then the server ends the watch (its timeoutSeconds): resumed from the bookmark.
  api.bookmark(true);
  const bookmarked = api.resourceVersion;
  await until(() => api.watchedFrom.length === 3 && api.openWatches === 1, 'the ended watch to be resumed');
  assert.equal(api.watchedFrom[2], bookmarked, "resumed from the bookmark's resourceVersion");
  // A change made while the next watch runs arrives through it.
  slice(api, 'vllm-abc', [{ ip: '10.1.0.2', pod: 'vllm-1' }]);
  await until(() => names(source).join() === 'vllm-vllm-1', 'the change after the resume');
  assert.equal(lists(), 1, 'a resume lists nothing again');
  assert.equal(source.state().ok, true);
});

for (const goneAs of ['event', 'http'] as const) {
  test(`kubernetes source: 410 Gone (${goneAs === 'event' ? 'an ERROR event in the watch' : 'an HTTP 410 answer'}) lists again, keeping the set until the new list is whole`, async (t) => {
    const { api, source, until } = await rig(t, (api) => slice(api, 'vllm-abc', [{ ip: '10.1.0.1', pod: 'vllm-0' }]));
    api.goneAs = goneAs;
    await until(() => names(source).length === 1 && api.openWatches === 1, 'the first watch');
    const lists = (): number => api.requests.filter((r) => r.query.get('watch') === null).length;
    const sets: string[] = [];
    source.onChange((what) => void (what === 'nodes' && sets.push(names(source).join())));
    // A change the open watch does not hear, then the history forgotten: only a list can tell it.
    api.deaf = true;
    slice(api, 'vllm-abc', [{ ip: '10.1.0.2', pod: 'vllm-1' }]);
    api.compact();
    api.deaf = false;
    api.breakWatches();
    await until(() => names(source).join() === 'vllm-vllm-1', 'the relist to show the change');
    assert.ok(lists() >= 2, 'listed again');
    assert.deepEqual(sets, ['vllm-vllm-1'], 'straight from the old set to the new one, never empty between');
    assert.equal(source.state().ok, true, 'a 410 is the protocol, not a failure');
    await until(() => api.openWatches === 1, 'watching again');
  });
}

test('kubernetes source: a server that answers 410 to every fresh watch is not asked in a loop: a failure, with a back-off', async (t) => {
  const { api, source, until } = await rig(t, (api) => slice(api, 'vllm-abc', [{ ip: '10.1.0.1', pod: 'vllm-0' }]));
  await until(() => names(source).length === 1 && api.openWatches === 1, 'the first watch');
  const lists = (): number => api.requests.filter((r) => r.query.get('watch') === null).length;
  api.alwaysGone = true;
  api.breakWatches();
  await until(() => !source.state().ok, 'the failure');
  const state = source.state();
  assert.ok(!state.ok && /every watch from a fresh list was answered 410 Gone/.test(state.reason), JSON.stringify(state));
  assert.equal(lists(), 3, 'the first list and two relists; the third 410 in a row waits the back-off');
  assert.deepEqual(names(source), ['vllm-vllm-0']);
  api.alwaysGone = false;
  await until(() => source.state().ok && api.openWatches === 1, 'watching again after the back-off');
});

test('kubernetes source: a list read page by page', async (t) => {
  const { api, source, until } = await rig(t, (api) => {
    api.pageSize = 2;
    for (let i = 0; i < 5; i++) slice(api, `vllm-${i}`, [{ ip: `10.1.0.${i + 1}`, pod: `vllm-${i}` }]);
  });
  await until(() => names(source).length === 5, 'all five pages');
  const pages = api.requests.filter((r) => r.query.get('watch') === null);
  assert.equal(pages.length, 3);
  assert.deepEqual(
    pages.map((p) => p.query.get('continue')),
    [null, '2:105', '4:105'],
  );
});

test('kubernetes source: failures keep the last good set and say why; it answers again by itself', async (t) => {
  const { api, source, until } = await rig(t, (api) => slice(api, 'vllm-abc', [{ ip: '10.1.0.1', pod: 'vllm-0' }]), {
    timeoutMs: 2_000,
  });
  await until(() => names(source).length === 1 && api.openWatches === 1, 'the first watch');
  // The next watch is refused (RBAC taken away): the reason is the API's own words.
  api.failNext(
    1,
    403,
    'endpointslices.discovery.k8s.io is forbidden: User "system:serviceaccount:models:switchyard" cannot watch',
  );
  api.breakWatches();
  await until(() => !source.state().ok, 'the failure to show');
  const state = source.state();
  assert.ok(!state.ok);
  assert.match(
    state.reason,
    /^EndpointSlices of models\/vllm at http:\/\/127\.0\.0\.1:\d+: watch: HTTP 403 403 Forbidden: endpointslices/,
  );
  assert.match(state.reason, /keeping the last good set$/);
  assert.deepEqual(names(source), ['vllm-vllm-0'], 'never emptied by a failure');
  await until(() => source.state().ok && api.openWatches === 1, 'the retry (after its back-off) to watch again');

  // An event past the bound (4 MiB) is not read whole: the watch ends with the reason, and resumes.
  api.sendRaw(`{"type":"MODIFIED","object":{"pad":"${'x'.repeat(4 * 1024 * 1024 + 10)}"}}`);
  await until(() => !source.state().ok, 'the oversize event to fail the watch');
  const oversize = source.state();
  assert.ok(!oversize.ok && /a watch event exceeds 4194304 bytes/.test(oversize.reason), JSON.stringify(oversize));
  assert.deepEqual(names(source), ['vllm-vllm-0']);
  await until(() => source.state().ok && api.openWatches === 1, 'watching again');
});

test('kubernetes source: no kubeconfig file, or no such context: the reason, and no nodes made up', async (t) => {
  const missing = NODE_SOURCES['kubernetes']!(spec('/nonexistent/kubeconfig'), { clock: systemClock });
  const told: Trigger = { label: 'source change', subscribe: (listener) => missing.onChange(() => listener()) };
  missing.start();
  t.after(() => missing.stop());
  await untilEvent(() => !missing.state().ok, [told], 'the failure');
  const state = missing.state();
  assert.ok(!state.ok && /cannot read the kubeconfig \/nonexistent\/kubeconfig/.test(state.reason), JSON.stringify(state));
  assert.deepEqual(missing.nodes(), []);

  const api = await startK8sApi();
  t.after(() => api.close());
  const wrong = NODE_SOURCES['kubernetes']!(spec(await api.kubeconfig(), { context: 'prod' }), { clock: systemClock });
  const toldWrong: Trigger = { label: 'source change', subscribe: (listener) => wrong.onChange(() => listener()) };
  wrong.start();
  t.after(() => wrong.stop());
  await untilEvent(() => !wrong.state().ok, [toldWrong], 'the failure');
  const wrongState = wrong.state();
  assert.ok(!wrongState.ok && /has no context 'prod'/.test(wrongState.reason), JSON.stringify(wrongState));
});
