// Every registered node source (src/fleet/node-sources.ts) keeps the same promises: it is named as
// configured; its nodes are well formed, named once each and stably (the same servers answered
// again, in any order, are the same names and no change); a failure keeps the last good set and
// says why; it calls back only on a real change, and never after stop. Each kind brings a rig that
// can make it see a first set, a second set, and fail (static: a reload builds it anew, so its
// "second set" is a new source, and it cannot fail).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import {
  KUBERNETES_SOURCE_DEFAULTS,
  NODE_KINDS,
  NODE_SOURCE_DEFAULTS,
  type DnsNodeSourceSpec,
  type KubernetesNodeSourceSpec,
  type NodeSpec,
} from '#src/config/index.ts';
import { NODE_NAME_RULE } from '#src/config/schema-parts.ts';
import {
  NODE_SOURCES,
  type DnsAnswer,
  type KubeApi,
  type NodeSource,
  type SourceChange,
  type WatchEnd,
  type WatchHandlers,
} from '#src/fleet/index.ts';
import { readListPage } from '#src/fleet/k8s-watch.ts';

interface Rig {
  /** A started source that sees the first set (after `settle`). */
  build(): NodeSource;
  /** Lets the source's pending work run (timers, lookups). */
  settle(): Promise<void>;
  /** Makes the source see the second set on its next look; answers the source that sees it (the same one, or a rebuilt one). */
  second(source: NodeSource): Promise<NodeSource>;
  /** Makes the source's next look fail; undefined = the kind cannot fail. */
  fail?: () => Promise<void>;
  /** Makes the source's next look answer the first set again, the records in another order. */
  reordered?: () => Promise<void>;
}

function staticSpec(name: string, url: string): NodeSpec {
  return {
    name,
    url,
    apiKey: 'k',
    kind: 'vllm',
    group: 'gpu',
    kv: 'auto',
    weight: 2,
    wake: undefined,
    wakeTimeoutMs: 120_000,
  };
}

function staticRig(): Rig {
  const first = [staticSpec('a', 'http://127.0.0.1:9001'), staticSpec('b', 'http://127.0.0.1:9002')];
  const build = (nodes: readonly NodeSpec[]): NodeSource => {
    const source = NODE_SOURCES['static']!({ kind: 'static', name: 'static', nodes }, { clock: new ManualClock() });
    source.start();
    return source;
  };
  return {
    build: () => build(first),
    settle: async () => {},
    second: async (source) => {
      source.stop();
      return build([first[1]!, staticSpec('c', 'http://127.0.0.1:9003')]);
    },
  };
}

function dnsRig(): Rig {
  const clock = new ManualClock();
  const first: DnsAnswer = {
    ok: true,
    records: [
      { address: '127.0.0.2', port: 8000, ttlMs: 10_000 },
      { address: '127.0.0.3', port: 8000, ttlMs: 10_000 },
    ],
  };
  const answers: { next: DnsAnswer } = { next: first };
  const spec: DnsNodeSourceSpec = {
    kind: 'dns',
    name: 'pool',
    query: { type: 'address', host: 'pool.test', port: 8000 },
    scheme: 'http',
    nodeKind: 'vllm',
    group: 'gpu',
    apiKey: undefined,
    resolver: undefined,
    ...NODE_SOURCE_DEFAULTS,
  };
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  const look = async (): Promise<void> => {
    clock.advance(NODE_SOURCE_DEFAULTS.maxTtlMs);
    await settle();
  };
  return {
    build: () => {
      const source = NODE_SOURCES['dns']!(spec, { clock, lookup: async () => answers.next });
      source.start();
      return source;
    },
    settle,
    second: async (source) => {
      answers.next = {
        ok: true,
        records: [
          { address: '127.0.0.3', port: 8000, ttlMs: 10_000 },
          { address: '127.0.0.4', port: 8000, ttlMs: 10_000 },
        ],
      };
      await look();
      return source;
    },
    fail: async () => {
      answers.next = { ok: false, reason: 'A/AAAA pool.test failed: ECONNREFUSED' };
      await look();
    },
    reordered: async () => {
      answers.next = { ok: true, records: [...first.records].reverse() };
      await look();
    },
  };
}

/** An EndpointSlice object as the API answers it: pods on port `http`, ready unless said. */
function sliceObject(rv: number, pods: readonly [pod: string, ip: string][]): Record<string, unknown> {
  return {
    metadata: { name: 'vllm-abc', resourceVersion: String(rv), labels: { 'kubernetes.io/service-name': 'vllm' } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8000 }],
    endpoints: pods.map(([pod, ip]) => ({
      addresses: [ip],
      conditions: { ready: true, serving: true, terminating: false },
      targetRef: { kind: 'Pod', name: pod },
    })),
  };
}

/** The Kubernetes source over an API held in memory: a list, then one watch the rig sends events through or ends. */
function kubernetesRig(): Rig {
  const clock = new ManualClock();
  const first: [string, string][] = [
    ['vllm-0', '10.1.0.1'],
    ['vllm-1', '10.1.0.2'],
  ];
  const api: { rv: number; handlers: WatchHandlers | undefined; end: ((end: WatchEnd) => void) | undefined } = {
    rv: 10,
    handlers: undefined,
    end: undefined,
  };
  const fake: KubeApi = {
    where: 'EndpointSlices of models/vllm at https://api.test',
    // The list answers the first set through the same reader the API's answers go through.
    list: async () => readListPage({ metadata: { resourceVersion: String(api.rv) }, items: [sliceObject(api.rv, first)] }),
    watch: (_rv, handlers, signal) =>
      new Promise<WatchEnd>((resolve) => {
        api.handlers = handlers;
        api.end = resolve;
        handlers.onOpen();
        signal.addEventListener('abort', () => resolve({ kind: 'closed' }), { once: true });
      }),
    close: () => {},
  };
  const spec: KubernetesNodeSourceSpec = {
    kind: 'kubernetes',
    name: 'vllm',
    namespace: 'models',
    service: 'vllm',
    portName: 'http',
    scheme: 'http',
    nodeKind: 'vllm',
    group: 'gpu',
    apiKey: undefined,
    kubeconfig: undefined,
    context: undefined,
    ...KUBERNETES_SOURCE_DEFAULTS,
  };
  const send = (pods: readonly [string, string][]): void => {
    api.rv += 1;
    api.handlers?.onEvent({ type: 'MODIFIED', object: sliceObject(api.rv, pods) });
  };
  const settle = async (): Promise<void> => {
    // The loop and the protocol are imported when the source starts: wait for its watch to open.
    for (let i = 0; i < 1000 && api.handlers === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 1));
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  return {
    build: () => {
      api.handlers = undefined;
      const source = NODE_SOURCES['kubernetes']!(spec, { clock, kubeApi: async () => fake });
      source.start();
      return source;
    },
    settle,
    second: async (source) => {
      send([first[1]!, ['vllm-2', '10.1.0.3']]);
      await settle();
      return source;
    },
    fail: async () => {
      api.end?.({ kind: 'failed', reason: 'watch: HTTP 403 Forbidden: endpointslices is forbidden' });
      await settle();
    },
    reordered: async () => {
      send([...first].reverse());
      await settle();
    },
  };
}

const RIGS: Readonly<Record<string, () => Rig>> = { static: staticRig, dns: dnsRig, kubernetes: kubernetesRig };

test('every registered node source kind has a rig in this suite', () => {
  assert.deepEqual(Object.keys(NODE_SOURCES).sort(), Object.keys(RIGS).sort());
});

function assertWellFormed(source: NodeSource): void {
  const nodes = source.nodes();
  assert.equal(new Set(nodes.map((n) => n.name)).size, nodes.length, `${source.kind}: each name once`);
  for (const node of nodes) {
    assert.ok(NODE_NAME_RULE.test(node.name), `${source.kind}: ${node.name} is a valid node name`);
    assert.ok(/^https?:\/\/[^/]+$/.test(node.url), `${source.kind}: ${node.url} is a base URL`);
    assert.ok((NODE_KINDS as readonly string[]).includes(node.kind));
    const spec = source.spec(node);
    assert.deepEqual([spec.name, spec.url, spec.kind, spec.group], [node.name, node.url, node.kind, node.group]);
    assert.equal(spec.source ?? 'static', source.name, `${source.kind}: the spec names its source`);
    assert.ok(spec.weight > 0 && spec.wakeTimeoutMs > 0);
  }
}

for (const [kind, makeRig] of Object.entries(RIGS)) {
  test(`node source ${kind}: named as configured, its first set well formed, the state ok`, async (t) => {
    const rig = makeRig();
    const source = rig.build();
    t.after(() => source.stop());
    await rig.settle();
    assert.equal(source.kind, kind);
    assert.ok(source.name.length > 0);
    assert.equal(source.nodes().length, 2);
    assertWellFormed(source);
    assert.equal(source.state().ok, true);
  });

  test(`node source ${kind}: a node that stays keeps its name; one that leaves is gone, one that arrives is added`, async (t) => {
    const rig = makeRig();
    const first = rig.build();
    await rig.settle();
    const before = first.nodes();
    const changes: SourceChange[] = [];
    first.onChange((what) => changes.push(what));
    const second = await rig.second(first);
    t.after(() => second.stop());
    const after = second.nodes();
    assertWellFormed(second);
    const stayed = before.filter((n) => after.some((m) => m.name === n.name && m.url === n.url));
    assert.equal(stayed.length, 1, `${kind}: one node stays under the same name`);
    assert.equal(after.length, 2);
    if (second === first) assert.deepEqual(changes, ['nodes'], `${kind}: one change told`);
  });

  test(`node source ${kind}: the same servers answered again, in another order, are no change`, async (t) => {
    const rig = makeRig();
    const source = rig.build();
    t.after(() => source.stop());
    await rig.settle();
    const before = source.nodes();
    const changes: SourceChange[] = [];
    source.onChange((what) => changes.push(what));
    await rig.reordered?.();
    assert.deepEqual(source.nodes(), before);
    assert.deepEqual(changes, []);
  });

  test(`node source ${kind}: a failure keeps the last good set and says why; nothing is told after stop`, async (t) => {
    const rig = makeRig();
    const source = rig.build();
    t.after(() => source.stop());
    await rig.settle();
    const before = source.nodes();
    const changes: SourceChange[] = [];
    source.onChange((what) => changes.push(what));
    if (rig.fail !== undefined) {
      await rig.fail();
      const state = source.state();
      assert.equal(state.ok, false);
      assert.ok(
        !state.ok && state.reason.length > 0 && state.reason.includes('keeping the last good set'),
        JSON.stringify(state),
      );
      assert.deepEqual(source.nodes(), before, `${kind}: the fleet is never emptied by a failure`);
      assert.deepEqual(changes, ['state']);
    }
    source.stop();
    changes.length = 0;
    await rig.second(source).catch(() => source);
    assert.deepEqual(changes, [], `${kind}: stopped, it tells nothing`);
  });
}
