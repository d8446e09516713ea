// `[[node_sources]]`: a DNS source's settings, their defaults, and a clear problem for each mistake.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '#src/config-tables.ts';

const source = (body: string): string => `[[node_sources]]\nkind = "dns"\nname = "gpu"\n${body}\n`;

test('a DNS source by name and port: the defaults; no [[nodes]] needed', () => {
  const loaded = loadConfig(source('host = "vllm.models.svc.cluster.local"\nport = 8000\napi_key = "env:K"'), { K: 's3' });
  assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.problems));
  assert.deepEqual(loaded.config.nodes, []);
  assert.deepEqual(loaded.config.nodeSources, [
    {
      kind: 'dns',
      name: 'gpu',
      query: { type: 'address', host: 'vllm.models.svc.cluster.local', port: 8000 },
      scheme: 'http',
      nodeKind: 'auto',
      group: undefined,
      apiKey: 's3',
      resolver: undefined,
      intervalMs: 30_000,
      minTtlMs: 5_000,
      maxTtlMs: 300_000,
      timeoutMs: 2_000,
    },
  ]);
});

test('an SRV source with its own resolver and bounds', () => {
  const loaded = loadConfig(
    source(
      'srv = "_http._tcp.vllm.models.svc"\nresolver = "[::1]:5353"\nnode_kind = "vllm"\ngroup = "big"\ninterval = "10s"\nmin_ttl = "1s"\nmax_ttl = "1m"\nscheme = "https"',
    ) + '\n[[models.available]]\nname = "m"\ngroup = "big"\n',
    {},
  );
  assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.problems));
  const dns = loaded.config.nodeSources?.[0];
  assert.ok(dns?.kind === 'dns');
  assert.deepEqual(dns?.query, { type: 'srv', record: '_http._tcp.vllm.models.svc' });
  assert.deepEqual(dns?.resolver, { host: '::1', port: 5353 });
  assert.deepEqual(
    [dns?.nodeKind, dns?.group, dns?.scheme, dns?.intervalMs, dns?.minTtlMs, dns?.maxTtlMs],
    ['vllm', 'big', 'https', 10_000, 1_000, 60_000],
  );
});

test('each mistake is a problem naming its key', () => {
  const rows: [string, string, string][] = [
    ['kind = "consul"', 'node_sources[0].kind', 'must be one of: dns'],
    ['host = "a.svc"', 'node_sources[0].port', 'is required with host (A/AAAA records carry no port)'],
    ['port = 80', 'node_sources[0].host', 'is required (the name to resolve), or give srv instead'],
    [
      'srv = "_http._tcp.a.svc"\nport = 80',
      'node_sources[0].srv',
      'either srv (the SRV record carries the ports) or host and port, not both',
    ],
    ['srv = "a.svc"', 'node_sources[0].srv', 'must be an SRV record name, like "_http._tcp.vllm.models.svc"'],
    ['host = "a b"\nport = 80', 'node_sources[0].host', 'must be a DNS name'],
    ['host = "a.svc"\nport = 0', 'node_sources[0].port', 'must be from 1 to 65535'],
    [
      'host = "a.svc"\nport = 80\nresolver = "dns.local:53"',
      'node_sources[0].resolver',
      'must name the DNS server by IP address',
    ],
    ['host = "a.svc"\nport = 80\nresolver = "10.0.0.2"', 'node_sources[0].resolver', 'the port is missing'],
    ['host = "a.svc"\nport = 80\nmin_ttl = "2m"\nmax_ttl = "1m"', 'node_sources[0].min_ttl', 'must not be longer than max_ttl'],
    ['host = "a.svc"\nport = 80\nnode_kind = "tgi"', 'node_sources[0].node_kind', 'must be one of: auto, vllm'],
    ['host = "a.svc"\nport = 80\nttl = "1s"', 'node_sources[0].ttl', 'unknown key; expected one of: kind, name, host, port, srv'],
  ];
  for (const [body, path, fragment] of rows) {
    const text = body.startsWith('kind') ? `[[node_sources]]\n${body}\nname = "gpu"\nhost = "a.svc"\nport = 80\n` : source(body);
    const loaded = loadConfig(text, {});
    assert.ok(!loaded.ok, body);
    const problem = loaded.problems.find((p) => p.path === path);
    assert.ok(problem?.message.includes(fragment), `${body}: ${JSON.stringify(loaded.problems)}`);
  }
});

test('source names: plain, unique, and not "static" (the [[nodes]] list)', () => {
  const two = source('host = "a.svc"\nport = 80') + source('host = "b.svc"\nport = 80');
  const dup = loadConfig(two, {});
  assert.ok(
    !dup.ok && dup.problems.some((p) => p.path === 'node_sources[1].name' && /duplicate node source name 'gpu'/.test(p.message)),
  );
  const named = (name: string) => loadConfig(`[[node_sources]]\nkind = "dns"\nname = "${name}"\nhost = "a.svc"\nport = 80\n`, {});
  const reserved = named('static');
  assert.ok(!reserved.ok && /'static' names the \[\[nodes\]\] list/.test(reserved.problems[0]?.message ?? ''));
  const bad = named('gpu.pool');
  assert.ok(!bad.ok && /letters A-Z a-z, digits, _ and -/.test(bad.problems[0]?.message ?? ''));
});

test('no [[nodes]] and no [[node_sources]] is still a problem', () => {
  const loaded = loadConfig('', {});
  assert.ok(
    !loaded.ok &&
      loaded.problems.some((p) => p.path === 'nodes' && /at least one \[\[nodes\]\] entry is required/.test(p.message)),
  );
});

test('a Kubernetes source: its keys, its defaults, and each mistake named by its key', () => {
  const k8s = (body: string): string => `[[node_sources]]\nkind = "kubernetes"\nname = "vllm"\n${body}\n`;
  const loaded = loadConfig(k8s('namespace = "models"\nservice = "vllm"\nport_name = "http"\nnode_kind = "vllm"'), {});
  assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.problems));
  assert.deepEqual(loaded.config.nodeSources, [
    {
      kind: 'kubernetes',
      name: 'vllm',
      namespace: 'models',
      service: 'vllm',
      portName: 'http',
      scheme: 'http',
      nodeKind: 'vllm',
      group: undefined,
      apiKey: undefined,
      kubeconfig: undefined,
      context: undefined,
      timeoutMs: 10_000,
      watchMs: 300_000,
    },
  ]);
  const rows: [string, string, string][] = [
    ['service = "vllm"', 'node_sources[0].namespace', 'is required: the namespace of the Service'],
    ['namespace = "models"', 'node_sources[0].service', 'is required: the Service whose EndpointSlices give the nodes'],
    ['namespace = "Models"\nservice = "vllm"', 'node_sources[0].namespace', 'must be a Kubernetes namespace name'],
    ['namespace = "models"\nservice = "v_llm"', 'node_sources[0].service', 'must be a Kubernetes Service name'],
    [
      'namespace = "models"\nservice = "vllm"\nport_name = "a-very-long-port-name"',
      'node_sources[0].port_name',
      "must be the name of one of the Service's ports",
    ],
    ['namespace = "models"\nservice = "vllm"\ncontext = "prod"', 'node_sources[0].context', 'goes with kubeconfig'],
    ['namespace = "models"\nservice = "vllm"\nwatch = "500ms"', 'node_sources[0].watch', 'must be at least 1s'],
    ['namespace = "models"\nservice = "vllm"\nhost = "a.svc"', 'node_sources[0].host', 'unknown key'],
  ];
  for (const [body, path, fragment] of rows) {
    const result = loadConfig(k8s(body), {});
    assert.ok(!result.ok, body);
    const problem = result.problems.find((p) => p.path === path);
    assert.ok(problem?.message.includes(fragment), `${body}: ${JSON.stringify(result.problems)}`);
  }
  const unknown = loadConfig('[[node_sources]]\nkind = "consul"\nname = "x"\n', {});
  assert.ok(!unknown.ok && unknown.problems.some((p) => p.message.includes('must be one of: dns, kubernetes')));
});
