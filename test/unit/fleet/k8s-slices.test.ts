// The Kubernetes source's pure rules: which endpoints are nodes (ready / serving / terminating, nil
// conditions as the API documents them), their names (the pod, else the address), the port taken,
// dual-stack pods once, bad slices refused with a reason; and the watch protocol's steps.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KUBERNETES_SOURCE_DEFAULTS, type KubernetesNodeSourceSpec } from '#src/config/index.ts';
import { NODE_NAME_RULE } from '#src/config/schema-parts.ts';
import { endpointServes, k8sNodeName, nodesFromSlices, readSlice, type EndpointSlice } from '#src/fleet/k8s-slices.ts';
import { applyWatchEvent, readListPage, type SliceSet } from '#src/fleet/k8s-watch.ts';

const spec: KubernetesNodeSourceSpec = {
  kind: 'kubernetes',
  name: 'vllm',
  namespace: 'models',
  service: 'vllm',
  portName: 'http',
  scheme: 'http',
  nodeKind: 'vllm',
  group: 'big',
  apiKey: undefined,
  kubeconfig: undefined,
  context: undefined,
  ...KUBERNETES_SOURCE_DEFAULTS,
};

function slice(name: string, endpoints: unknown[], extra: Record<string, unknown> = {}): EndpointSlice {
  const read = readSlice({
    metadata: { name, resourceVersion: '7' },
    addressType: 'IPv4',
    ports: [
      { name: 'metrics', port: 9090 },
      { name: 'http', port: 8000 },
    ],
    endpoints,
    ...extra,
  });
  assert.ok(read.ok, JSON.stringify(read));
  return read.value;
}

const endpoint = (ip: string, pod: string | undefined, conditions: Record<string, unknown> = {}): unknown => ({
  addresses: [ip],
  conditions,
  ...(pod === undefined ? {} : { targetRef: { kind: 'Pod', name: pod } }),
});

test('an endpoint is a node while ready and serving and not terminating; nil conditions count as the API says', () => {
  const rows: [Record<string, boolean | undefined>, string][] = [
    [{}, 'serves'],
    [{ ready: true, serving: true, terminating: false }, 'serves'],
    [{ ready: true }, 'serves'],
    [{ ready: false, serving: false, terminating: false }, 'not-ready'],
    [{ ready: true, serving: false }, 'not-ready'], // publishNotReadyAddresses: ready forced, serving the truth
    [{ ready: false, serving: true, terminating: true }, 'terminating'], // draining while it still serves
    [{ ready: false, serving: false, terminating: true }, 'terminating'],
  ];
  for (const [conditions, expected] of rows) {
    const read = slice('s', [endpoint('10.0.0.1', 'p', conditions)]);
    assert.equal(endpointServes(read.endpoints[0]!), expected, JSON.stringify(conditions));
  }
});

test('the nodes: named by pod, at the named port, sorted; held-back endpoints counted by why', () => {
  const { nodes, heldBack } = nodesFromSlices(spec, [
    slice('b', [endpoint('10.0.0.3', 'vllm-2'), endpoint('10.0.0.4', 'vllm-3', { ready: false, terminating: true })]),
    slice('a', [
      endpoint('10.0.0.1', 'vllm-0'),
      endpoint('10.0.0.2', undefined),
      endpoint('10.0.0.5', 'vllm-4', { ready: false }),
    ]),
    slice('c', [endpoint('10.0.0.6', 'vllm-5')], { ports: [{ name: 'grpc', port: 9000 }] }),
  ]);
  assert.deepEqual(
    nodes.map((n) => [n.name, n.url, n.kind, n.group, n.labels['pod'] ?? null]),
    [
      ['vllm-10.0.0.2-8000', 'http://10.0.0.2:8000', 'vllm', 'big', null],
      ['vllm-vllm-0', 'http://10.0.0.1:8000', 'vllm', 'big', 'vllm-0'],
      ['vllm-vllm-2', 'http://10.0.0.3:8000', 'vllm', 'big', 'vllm-2'],
    ],
  );
  assert.deepEqual(heldBack, { terminating: 1, notReady: 1, noPort: 1 });
  // Without port_name, a slice's only port; a slice of several ports then makes no node.
  const anyPort = { ...spec, portName: undefined };
  assert.deepEqual(
    nodesFromSlices(anyPort, [slice('c', [endpoint('10.0.0.6', 'vllm-5')], { ports: [{ name: '', port: 9000 }] })]).nodes.map(
      (n) => n.url,
    ),
    ['http://10.0.0.6:9000'],
  );
  assert.equal(nodesFromSlices(anyPort, [slice('a', [endpoint('10.0.0.1', 'vllm-0')])]).heldBack.noPort, 1);
});

test('a dual-stack pod (in an IPv4 and an IPv6 slice) is one node, at its IPv4 address, whatever the order', () => {
  const v6 = slice('v6', [endpoint('fd00::1', 'vllm-0')], { addressType: 'IPv6' });
  const v4 = slice('v4', [endpoint('10.0.0.1', 'vllm-0')]);
  for (const order of [
    [v6, v4],
    [v4, v6],
  ]) {
    assert.deepEqual(
      nodesFromSlices(spec, order).nodes.map((n) => [n.name, n.url]),
      [['vllm-vllm-0', 'http://10.0.0.1:8000']],
    );
  }
  assert.deepEqual(
    nodesFromSlices(spec, [v6]).nodes.map((n) => n.url),
    ['http://[fd00::1]:8000'],
  );
});

test('names are valid node names: a long pod name hashes, stably; no pod: the address and port', () => {
  const long = k8sNodeName('vllm', base('x'.repeat(80)), 8000);
  assert.match(long, /^vllm-[0-9a-f]{16}$/);
  assert.equal(long, k8sNodeName('vllm', base('x'.repeat(80)), 8000));
  assert.equal(k8sNodeName('vllm', base(undefined), 8000), 'vllm-10.0.0.1-8000');
  for (const name of [long, 'vllm-vllm-0']) assert.ok(NODE_NAME_RULE.test(name), name);
});

function base(target: string | undefined) {
  return { address: '10.0.0.1', ready: true, serving: true, terminating: false, target, host: undefined, zone: undefined };
}

test('what the API answers is read with care: bad addresses skipped, a bad slice refused with its reason', () => {
  const read = slice('s', [
    endpoint('10.0.0.1/evil', 'a'),
    endpoint('not-an-ip', 'b'),
    { addresses: [] },
    'junk',
    endpoint('10.0.0.9', 'c'),
  ]);
  assert.deepEqual(
    read.endpoints.map((e) => e.address),
    ['10.0.0.9'],
  );
  const fqdn = readSlice({ metadata: { name: 'f' }, addressType: 'FQDN', endpoints: [endpoint('vllm-0.vllm.models.svc', 'p')] });
  assert.ok(fqdn.ok && fqdn.value.endpoints.length === 1);
  assert.deepEqual(readSlice({ endpoints: [] }), { ok: false, reason: 'an EndpointSlice without metadata.name' });
  assert.deepEqual(readSlice({ metadata: { name: 'x' }, endpoints: 'no' }), {
    ok: false,
    reason: 'EndpointSlice x: endpoints is not a list',
  });
});

test('a list page: its slices, resourceVersion and continue token; anything else is a reason', () => {
  const page = readListPage({
    metadata: { resourceVersion: '12', continue: 'tok' },
    items: [{ metadata: { name: 'a' }, endpoints: [] }],
  });
  assert.ok(page.ok);
  assert.deepEqual([page.resourceVersion, page.continue, page.slices.map((s) => s.name)], ['12', 'tok', ['a']]);
  assert.deepEqual(readListPage({ items: [] }), {
    ok: false,
    reason: 'the list answer carries no metadata.resourceVersion',
    gone: false,
  });
  assert.deepEqual(readListPage('<html>'), { ok: false, reason: 'the list answer is not an EndpointSliceList', gone: false });
});

test('watch events: ADDED / MODIFIED / DELETED move the set, BOOKMARK only the version, ERROR 410 relists, the rest fail', () => {
  const empty: SliceSet = { resourceVersion: '10', slices: new Map() };
  const object = (rv: string) => ({ metadata: { name: 'a', resourceVersion: rv }, endpoints: [endpoint('10.0.0.1', 'p')] });
  const added = applyWatchEvent(empty, { type: 'ADDED', object: object('11') });
  assert.ok(added.kind === 'set' && added.changed && added.set.resourceVersion === '11' && added.set.slices.has('a'));
  const marked = applyWatchEvent(added.set, { type: 'BOOKMARK', object: { metadata: { resourceVersion: '40' } } });
  assert.ok(marked.kind === 'set' && !marked.changed && marked.set.resourceVersion === '40' && marked.set.slices.has('a'));
  const deleted = applyWatchEvent(marked.set, { type: 'DELETED', object: object('41') });
  assert.ok(deleted.kind === 'set' && deleted.set.slices.size === 0 && deleted.set.resourceVersion === '41');
  assert.ok(added.set.slices.has('a'), 'a step never changes the set it was given');
  assert.deepEqual(
    applyWatchEvent(empty, {
      type: 'ERROR',
      object: { code: 410, reason: 'Expired', message: 'too old resource version: 1 (50)' },
    }),
    {
      kind: 'relist',
      reason: 'the watch answered 410 Expired: too old resource version: 1 (50)',
    },
  );
  const rows: [unknown, string][] = [
    [
      { type: 'ERROR', object: { code: 500, reason: 'InternalError', message: 'etcd' } },
      'the watch answered 500 InternalError: etcd',
    ],
    [{ type: 'MODIFIED', object: { metadata: { name: 'a' } } }, 'a MODIFIED event without metadata.resourceVersion'],
    [{ type: 'SURPRISE', object: { metadata: { resourceVersion: '3' } } }, 'an unknown watch event type "SURPRISE"'],
    [{ object: {} }, 'a watch event without a type'],
    [{ type: 'ADDED', object: { metadata: { resourceVersion: '3' } } }, 'an EndpointSlice without metadata.name'],
  ];
  for (const [event, reason] of rows) assert.deepEqual(applyWatchEvent(empty, event), { kind: 'error', reason }, reason);
});
