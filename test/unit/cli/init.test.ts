// switchyard init's pure pieces: its arguments, the names it gives nodes, the figures it reports,
// and the config it writes (which check-config's loader must accept, whatever a node called its models).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '#src/config-tables.ts';
import { parseInitArgs } from '#src/cli/init-args.ts';
import { commentSafe, renderInitConfig, tomlString } from '#src/cli/init-config.ts';
import { nameKind, nodeNames, sourceNames, surveyedModels, type NameSurvey, type NodeSurvey } from '#src/cli/init-survey.ts';
import { NO_CAPACITY } from '#src/capacity/index.ts';

const found = (
  url: string,
  kind: 'vllm' | 'llamacpp' | 'ollama',
  role: 'router' | 'single' | 'unknown' = 'unknown',
  ids: string[] = ['m'],
): NodeSurvey => ({
  url,
  found: true,
  detection: { kind, role, evidence: 'test' },
  models: ids.map((id) => ({ id, loaded: true, ctx: 4096, slots: undefined })),
});
const missing = (url: string): NodeSurvey => ({ url, found: false, reason: 'did not answer' });

test('arguments: URLs normalised and deduplicated, options checked, each mistake named', () => {
  const parsed = parseInitArgs([
    'gpu-box:8000',
    'http://gpu-box:8000/',
    'http://10.0.0.5:8080/v1',
    '--out=x.toml',
    '--force',
    '--timeout',
    '500ms',
  ]);
  assert.deepEqual(parseInitArgs(['http://a']), {
    ok: true,
    args: { urls: ['http://a'], out: './switchyard.toml', force: false, listen: '127.0.0.1:8080', timeoutMs: 3000 },
  });
  const toStdout = parseInitArgs(['http://a', '--out', '-']);
  assert.ok(toStdout.ok && toStdout.args.out === undefined, 'stdout');
  assert.deepEqual(parsed, {
    ok: true,
    args: {
      urls: ['http://gpu-box:8000', 'http://10.0.0.5:8080'],
      out: 'x.toml',
      force: true,
      listen: '127.0.0.1:8080',
      timeoutMs: 500,
    },
  });
  const mistakes: [string[], RegExp][] = [
    [[], /at least one server URL/],
    [['http://a', '--out', '-', '--force'], /--force only goes with a file/],
    [['http://a', '--out'], /--out needs a value/],
    [['http://a', '--bogus'], /unknown option --bogus/],
    [['http://a', '-x'], /unknown option -x/],
    [['http://a', '--timeout', '3'], /--timeout/],
    [['ftp://a'], /ftp:\/\/a: must be an http\(s\) URL/],
    [['http://user:pw@a'], /without credentials/],
  ];
  for (const [argv, message] of mistakes) {
    const result = parseInitArgs(argv);
    assert.ok(!result.ok, argv.join(' '));
    assert.match(result.message, message, argv.join(' '));
  }
});

test('node names: the host when it is a name, else the kind; unique in order', () => {
  const surveys = [
    found('http://127.0.0.1:8000', 'vllm'),
    found('http://127.0.0.1:8001', 'vllm'),
    found('http://127.0.0.1:8080', 'llamacpp', 'router'),
    found('http://127.0.0.1:8081', 'llamacpp', 'single'),
    found('http://GPU_Box.lan:11434', 'ollama'),
    found('http://[::1]:8002', 'vllm'),
    missing('http://127.0.0.1:1'),
    missing('http://localhost:2'),
  ];
  assert.deepEqual(nodeNames(surveys), ['vllm', 'vllm-2', 'llamacpp-router', 'llamacpp', 'gpu-box', 'vllm-3', 'node', 'node-2']);
});

test('surveyed figures: per model, then the host, then the listing; loaded from the capacity answer when it says', () => {
  const listing = [
    { id: 'a', loaded: true, status: undefined, contextTokens: 1000, aliases: [] },
    { id: 'b', loaded: true, status: undefined, contextTokens: undefined, aliases: [] },
  ];
  assert.deepEqual(surveyedModels(listing, NO_CAPACITY), [
    { id: 'a', loaded: true, ctx: 1000, slots: undefined },
    { id: 'b', loaded: true, ctx: undefined, slots: undefined },
  ]);
  const single = { ...NO_CAPACITY, role: 'single' as const, host: { nCtx: 512, slots: 2 } };
  assert.deepEqual(
    surveyedModels(listing, single).map((m) => [m.ctx, m.slots]),
    [
      [512, 2],
      [512, 2],
    ],
  );
  const ollama = { ...NO_CAPACITY, models: { b: { nCtx: 4096, slots: undefined } }, loadedIds: ['b'] };
  assert.deepEqual(
    surveyedModels(listing, ollama).map((m) => [m.id, m.loaded, m.ctx]),
    [
      ['a', false, 1000],
      ['b', true, 4096],
    ],
  );
});

test('the written config loads, lists each node with its models, and comments out the ones not found', () => {
  const surveys = [
    found('http://127.0.0.1:8000', 'vllm', 'unknown', ['x', 'y']),
    found('http://127.0.0.1:8080', 'llamacpp', 'router'),
    missing('http://127.0.0.1:1'),
  ];
  const text = renderInitConfig(surveys, nodeNames(surveys), { listen: '127.0.0.1:9999' });
  const loaded = loadConfig(text, {});
  assert.ok(loaded.ok, JSON.stringify(loaded));
  assert.deepEqual(
    loaded.config.nodes.map((n) => [n.name, n.url, n.kind]),
    [
      ['vllm', 'http://127.0.0.1:8000', 'vllm'],
      ['llamacpp-router', 'http://127.0.0.1:8080', 'llamacpp'],
    ],
  );
  assert.equal(loaded.config.server.listen.port, 9999);
  assert.match(text, /^# vllm \(test\)\n#   x {2}loaded, ctx 4096\n#   y {2}loaded, ctx 4096\n\[\[nodes\]\]$/m);
  assert.match(text, /^# llama\.cpp router \(test\)$/m);
  assert.match(
    text,
    /^# http:\/\/127\.0\.0\.1:1: did not answer\.\n.*\n# \[\[nodes\]\]\n# name = "node"\n# url = "http:\/\/127\.0\.0\.1:1"\n# kind = "auto"$/m,
  );
  assert.ok(text.endsWith('\n'));
});

test('a model id cannot break out of its comment; strings are TOML-escaped', () => {
  const hostile = found('http://127.0.0.1:8000', 'vllm', 'unknown', [
    'evil\n[[nodes]]\nname = "x"\nurl = "http://attacker"',
    'a\u0000b\u001b[31m',
  ]);
  const text = renderInitConfig([hostile], ['vllm'], { listen: '127.0.0.1:8080' });
  const loaded = loadConfig(text, {});
  assert.ok(loaded.ok, JSON.stringify(loaded));
  assert.deepEqual(
    loaded.config.nodes.map((n) => n.url),
    ['http://127.0.0.1:8000'],
  );
  assert.equal(commentSafe('x'.repeat(200)).length, 80);
  assert.equal(tomlString('a"b\\c\n'), '"a\\"b\\\\c\\u000a"');
});

test('a name of several servers is written as a DNS node source, each address beside it; the config loads', () => {
  const name = (host: string, surveys: NodeSurvey[], unprobed = 0): NameSurvey => ({
    url: `http://${host}:8000`,
    scheme: 'http',
    host,
    port: 8000,
    surveys,
    unprobed,
  });
  const vllm = name('vllm.models.svc', [
    found('http://10.0.0.1:8000', 'vllm', 'unknown', ['m']),
    missing('http://10.0.0.2:8000'),
  ]);
  const mixed = name('vllm.other.svc', [found('http://10.0.1.1:8000', 'vllm'), found('http://10.0.1.2:8000', 'ollama')], 3);
  const dead = name('gone.svc', [missing('http://10.0.2.1:8000'), missing('http://10.0.2.2:8000')]);
  const sources = sourceNames([vllm, mixed, dead]).map((n, i) => ({ survey: [vllm, mixed, dead][i]!, name: n }));
  assert.deepEqual(
    sources.map((s) => s.name),
    ['vllm', 'vllm-2', 'gone'],
  );
  assert.deepEqual([nameKind(vllm), nameKind(mixed), nameKind(dead)], ['vllm', 'auto', undefined]);
  const text = renderInitConfig([], [], { listen: '127.0.0.1:8080', names: sources, resolver: { host: '10.0.0.53', port: 53 } });
  const loaded = loadConfig(text, {});
  assert.ok(loaded.ok, JSON.stringify(loaded));
  assert.deepEqual(
    loaded.config.nodeSources?.map((s) => (s.kind === 'dns' ? [s.name, s.query, s.nodeKind, s.resolver] : [])),
    [
      ['vllm', { type: 'address', host: 'vllm.models.svc', port: 8000 }, 'vllm', { host: '10.0.0.53', port: 53 }],
      ['vllm-2', { type: 'address', host: 'vllm.other.svc', port: 8000 }, 'auto', { host: '10.0.0.53', port: 53 }],
    ],
    'a name where nothing answered is written commented out',
  );
  assert.match(text, /^# vllm\.models\.svc resolves to 2 addresses: a DNS node source follows the name/m);
  assert.match(text, /^# {3}http:\/\/10\.0\.0\.2:8000 {2}not recognised: did not answer$/m);
  assert.match(text, /^# {3}… and 3 more addresses, not probed$/m);
  assert.match(text, /^# \[\[node_sources\]\]\n# kind = "dns"\n# name = "gone"$/m);
});
