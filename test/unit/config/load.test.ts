import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CONFIG_DEFAULTS } from '#src/config/defaults.ts';
import { formatProblems } from '#src/config/load.ts';
import { loadConfig, loadConfigFile } from '#src/config-tables.ts';
import type { ConfigProblem, GatewayConfig } from '#src/config/types.ts';

const ONE_NODE = '[[nodes]]\nname = "gpu-a"\nurl = "http://10.0.0.5:8000"\n';

function loaded(toml: string, env: Record<string, string | undefined> = {}): GatewayConfig {
  const result = loadConfig(toml, env);
  assert.ok(result.ok, result.ok ? '' : formatProblems(result.problems));
  return result.config;
}

function problems(toml: string, env: Record<string, string | undefined> = {}): readonly ConfigProblem[] {
  const result = loadConfig(toml, env);
  assert.ok(!result.ok, 'expected problems, but the config loaded');
  return result.problems;
}

function assertProblem(found: readonly ConfigProblem[], path: string, fragment: string): void {
  assert.ok(
    found.some((problem) => problem.path === path && problem.message.includes(fragment)),
    `no problem at "${path}" containing "${fragment}" in:\n${formatProblems(found)}`,
  );
}

describe('loadConfig: a valid file', () => {
  test('fills every omitted setting from CONFIG_DEFAULTS', () => {
    const config = loaded(ONE_NODE);
    assert.deepEqual(config.server, CONFIG_DEFAULTS.server);
    assert.deepEqual(config.health, CONFIG_DEFAULTS.health);
    assert.deepEqual(config.discovery, CONFIG_DEFAULTS.discovery);
    assert.deepEqual(config.upstream, CONFIG_DEFAULTS.upstream);
    assert.deepEqual(config.models, { default: undefined, available: [], operatorHoldMs: CONFIG_DEFAULTS.models.operatorHoldMs });
    assert.deepEqual(config.nodes, [
      {
        name: 'gpu-a',
        url: 'http://10.0.0.5:8000',
        apiKey: undefined,
        kind: 'auto',
        group: undefined,
        kv: 'auto',
        weight: 1,
        wake: undefined,
        wakeTimeoutMs: 120_000,
      },
    ]);
  });

  test('converts snake_case keys, durations and sizes into camelCase milliseconds and bytes', () => {
    const config = loaded(
      `
[server]
listen = "[::1]:9090"
max_request_body_bytes = "1MiB"
max_header_bytes = "8KiB"
header_timeout = "5s"
request_timeout = "30s"
drain_timeout = "0s"
api_keys = ["literal-key", "env:CLIENT_KEY"]
workers = 2
[admin]
listen = "127.0.0.1:9091"
token = "env:ADMIN_TOKEN"
[health]
interval = "1m30s"
timeout = "250ms"
fail_threshold = 5
[discovery]
interval = "1h"
timeout = "1.5s"
max_body_bytes = 2048
miss_wait = "3s"
miss_cooldown = "0s"
[upstream]
connect_timeout = "1s"
headers_timeout = "10m"
body_idle_timeout = "2m"
total_timeout = "0s"
max_held_body_bytes = "1MiB"
max_held_bytes_total = "8MiB"
eject_after_failures = 2
eject_for = "3s"
max_connections = 16
connection_wait = "250ms"
[routing]
queue_timeout = "2s"
max_queue = 0
queue_aging = "3s"
load_on_demand = false
translate = false
completion_reserve = 64
tokenize_timeout = "100ms"
swap_after = "0s"
load_timeout = "45s"
router_queue = "gateway"
${ONE_NODE}`,
      { CLIENT_KEY: 'from-env', ADMIN_TOKEN: 'admin-secret' },
    );
    assert.deepEqual(config.server, {
      listen: { host: '::1', port: 9090 },
      maxRequestBodyBytes: 1_048_576,
      maxHeaderBytes: 8192,
      headerTimeoutMs: 5_000,
      listenBacklog: 4096,
      requestTimeoutMs: 30_000,
      drainTimeoutMs: 0,
      apiKeys: ['literal-key', 'from-env'],
      corsOrigins: [],
      workers: 2,
      stateDir: undefined,
    });
    assert.deepEqual(config.admin, { listen: { host: '127.0.0.1', port: 9091 }, token: 'admin-secret', hosts: [] });
    assert.deepEqual(config.routing, {
      policy: 'least-in-flight',
      affinityHeader: 'x-session-id',
      affinityPrefixChars: 256,
      affinityEpsilon: 0.25,
      sessions: true,
      sessionTtlMs: 1_800_000,
      cacheThreshold: 0.5,
      cacheBalanceAbs: 8,
      cacheBalanceRel: 1.5,
      cachePromptChars: 8_192,
      cacheMaxTreeChars: 4_000_000,
      queueTimeoutMs: 2_000,
      maxQueue: 0,
      queueAgingMs: 3_000,
      loadOnDemand: false,
      translate: false,
      resumableStreams: true,
      completionReserveTokens: 64,
      tokenizeTimeoutMs: 100,
      swapAfterMs: 0,
      loadTimeoutMs: 45_000,
      routerQueue: 'gateway',
    });
    assert.deepEqual(config.health, { intervalMs: 90_000, timeoutMs: 250, failThreshold: 5 });
    assert.deepEqual(config.discovery, {
      intervalMs: 3_600_000,
      timeoutMs: 1_500,
      maxBodyBytes: 2048,
      missWaitMs: 3_000,
      missCooldownMs: 0,
      maxModelsPerNode: 1024,
      maxModelIdBytes: 256,
      capacityRequestsPerPoll: 64,
    });
    assert.deepEqual(config.upstream, {
      connectTimeoutMs: 1_000,
      headersTimeoutMs: 600_000,
      bodyIdleTimeoutMs: 120_000,
      firstTokenTimeoutMs: 120_000,
      totalTimeoutMs: 0,
      maxHeldBodyBytes: 1_048_576,
      maxHeldBytesTotal: 8 * 1_048_576,
      ejectAfterFailures: 2,
      ejectForMs: 3_000,
      maxConnections: 16,
      connectionWaitMs: 250,
    });
  });

  test('reads models, aliases, groups and node kinds', () => {
    const config = loaded(`
[models]
default = "l3"
[[models.available]]
name = "llama-3"
aliases = ["l3", "llama"]
[[models.available]]
name = "qwen"
group = "big"
[[nodes]]
name = "big-box"
url = "https://big.example/"
kind = "sglang"
group = "big"
[[nodes]]
name = "small"
url = "http://small:8080"
`);
    assert.deepEqual(config.models, {
      default: 'l3',
      available: [
        { name: 'llama-3', group: undefined, aliases: ['l3', 'llama'], policy: undefined },
        { name: 'qwen', group: 'big', aliases: [], policy: undefined },
      ],
      operatorHoldMs: CONFIG_DEFAULTS.models.operatorHoldMs,
    });
    assert.deepEqual(
      config.nodes.map((node) => [node.name, node.kind, node.group, node.url]),
      [
        ['big-box', 'sglang', 'big', 'https://big.example'],
        ['small', 'auto', undefined, 'http://small:8080'],
      ],
    );
  });

  test('accepts any default model when no models are declared', () => {
    assert.equal(loaded(`[models]\ndefault = "whatever-the-nodes-have"\n${ONE_NODE}`).models.default, 'whatever-the-nodes-have');
  });

  test('resolves api_key "env:VAR" from the environment passed in, not from process.env', () => {
    const config = loaded(`${ONE_NODE}api_key = "env:SWITCHYARD_TEST_KEY"\n`, { SWITCHYARD_TEST_KEY: 'sk-from-env' });
    assert.equal(config.nodes[0]?.apiKey, 'sk-from-env');
  });

  test('keeps a literal api_key as written', () => {
    assert.equal(loaded(`${ONE_NODE}api_key = "sk-literal"\n`).nodes[0]?.apiKey, 'sk-literal');
  });

  test('returns a deeply frozen config', () => {
    const config = loaded(`[[models.available]]\nname = "m"\naliases = ["a"]\n${ONE_NODE}`);
    for (const value of [config, config.server, config.server.listen, config.health, config.discovery, config.upstream]) {
      assert.ok(Object.isFrozen(value));
    }
    for (const value of [
      config.models,
      config.models.available,
      config.models.available[0],
      config.models.available[0]?.aliases,
    ]) {
      assert.ok(Object.isFrozen(value));
    }
    assert.ok(Object.isFrozen(config.nodes) && Object.isFrozen(config.nodes[0]));
    assert.equal(Reflect.set(config.health, 'intervalMs', 1), false);
    assert.throws(() => Reflect.apply(Array.prototype.push, config.nodes, [config.nodes[0]]), TypeError);
  });
});

describe('loadConfig: one problem per rule, with its key path', () => {
  const rules: readonly {
    readonly rule: string;
    readonly toml: string;
    readonly path: string;
    readonly fragment: string;
    readonly env?: Record<string, string>;
  }[] = [
    {
      rule: 'a listen address without a port',
      toml: `[server]\nlisten = "localhost"\n${ONE_NODE}`,
      path: 'server.listen',
      fragment: 'must be "host:port"',
    },
    {
      rule: 'a listen port above 65535',
      toml: `[server]\nlisten = "0.0.0.0:70000"\n${ONE_NODE}`,
      path: 'server.listen',
      fragment: 'from 0 to 65535',
    },
    {
      rule: 'a body limit that is not a size',
      toml: `[server]\nmax_request_body_bytes = "lots"\n${ONE_NODE}`,
      path: 'server.max_request_body_bytes',
      fragment: 'must be a size in bytes',
    },
    {
      rule: 'a body limit of zero',
      toml: `[server]\nmax_request_body_bytes = 0\n${ONE_NODE}`,
      path: 'server.max_request_body_bytes',
      fragment: 'more than 0 bytes',
    },
    {
      rule: 'a duration without a unit',
      toml: `[health]\ninterval = 5\n${ONE_NODE}`,
      path: 'health.interval',
      fragment: 'must be a duration like "3s" or "250ms"',
    },
    {
      rule: 'a zero health timeout',
      toml: `[health]\ntimeout = "0s"\n${ONE_NODE}`,
      path: 'health.timeout',
      fragment: 'longer than 0s',
    },
    {
      rule: 'a fail_threshold below 1',
      toml: `[health]\nfail_threshold = 0\n${ONE_NODE}`,
      path: 'health.fail_threshold',
      fragment: 'at least 1',
    },
    {
      rule: 'a fractional fail_threshold',
      toml: `[health]\nfail_threshold = 2.5\n${ONE_NODE}`,
      path: 'health.fail_threshold',
      fragment: 'whole number',
    },
    {
      rule: 'a zero discovery interval',
      toml: `[discovery]\ninterval = "0ms"\n${ONE_NODE}`,
      path: 'discovery.interval',
      fragment: 'longer than 0s',
    },
    {
      rule: 'a zero discovery body limit',
      toml: `[discovery]\nmax_body_bytes = "0MiB"\n${ONE_NODE}`,
      path: 'discovery.max_body_bytes',
      fragment: 'more than 0 bytes',
    },
    {
      rule: 'a miss_wait without a unit',
      toml: `[discovery]\nmiss_wait = 100\n${ONE_NODE}`,
      path: 'discovery.miss_wait',
      fragment: 'a bare number has no unit',
    },
    {
      rule: 'a queue_aging without a unit',
      toml: `[routing]\nqueue_aging = 10\n${ONE_NODE}`,
      path: 'routing.queue_aging',
      fragment: 'a bare number has no unit',
    },
    {
      rule: 'a queue_aging that is not a duration',
      toml: `[routing]\nqueue_aging = "soon"\n${ONE_NODE}`,
      path: 'routing.queue_aging',
      fragment: 'must be a duration',
    },
    {
      rule: 'a zero connect timeout',
      toml: `[upstream]\nconnect_timeout = "0s"\n${ONE_NODE}`,
      path: 'upstream.connect_timeout',
      fragment: 'longer than 0s',
    },
    {
      rule: 'a headers timeout that is not a string',
      toml: `[upstream]\nheaders_timeout = true\n${ONE_NODE}`,
      path: 'upstream.headers_timeout',
      fragment: 'must be a duration',
    },
    {
      rule: 'a missing [[nodes]] list',
      toml: '[server]\nlisten = "127.0.0.1:8080"\n',
      path: 'nodes',
      fragment: 'at least one [[nodes]] entry is required',
    },
    { rule: 'an empty nodes array', toml: 'nodes = []\n', path: 'nodes', fragment: 'at least one [[nodes]] entry is required' },
    { rule: 'nodes written as a plain value', toml: 'nodes = "gpu-a"\n', path: 'nodes', fragment: 'must be an array of tables' },
    { rule: 'a node without a url', toml: '[[nodes]]\nname = "gpu-a"\n', path: 'nodes[0].url', fragment: 'is required' },
    { rule: 'a node without a name', toml: '[[nodes]]\nurl = "http://a"\n', path: 'nodes[0].name', fragment: 'is required' },
    {
      rule: 'an empty node name',
      toml: '[[nodes]]\nname = ""\nurl = "http://a"\n',
      path: 'nodes[0].name',
      fragment: 'must not be empty',
    },
    {
      rule: 'a node name with surrounding spaces',
      toml: '[[nodes]]\nname = " a "\nurl = "http://a"\n',
      path: 'nodes[0].name',
      fragment: 'whitespace',
    },
    {
      rule: 'a url that is not http(s)',
      toml: `${ONE_NODE}[[nodes]]\nname = "b"\nurl = "http://b"\n[[nodes]]\nname = "c"\nurl = "ftp://c"\n`,
      path: 'nodes[2].url',
      fragment: 'must be an http(s) URL',
    },
    {
      rule: 'a url that is not a URL at all',
      toml: '[[nodes]]\nname = "a"\nurl = "10.0.0.5:8000"\n',
      path: 'nodes[0].url',
      fragment: 'must be an http(s) URL',
    },
    {
      rule: 'a url with a query string',
      toml: '[[nodes]]\nname = "a"\nurl = "http://a/?x=1"\n',
      path: 'nodes[0].url',
      fragment: 'without a query string',
    },
    {
      rule: 'a url with a fragment',
      toml: '[[nodes]]\nname = "a"\nurl = "http://a/#x"\n',
      path: 'nodes[0].url',
      fragment: 'without a fragment',
    },
    {
      rule: 'a url that is a number',
      toml: '[[nodes]]\nname = "a"\nurl = 8000\n',
      path: 'nodes[0].url',
      fragment: 'must be a string, not an integer',
    },
    {
      rule: 'a duplicate node name, naming the first one',
      toml: `${ONE_NODE}[[nodes]]\nname = "gpu-b"\nurl = "http://b"\n[[nodes]]\nname = "c"\nurl = "http://c"\n[[nodes]]\nname = "gpu-b"\nurl = "http://d"\n`,
      path: 'nodes[3].name',
      fragment: 'duplicate node name "gpu-b" (also nodes[1])',
    },
    {
      rule: 'an unknown node kind',
      toml: `${ONE_NODE}kind = "tgi"\n`,
      path: 'nodes[0].kind',
      fragment: 'must be one of: auto, vllm, llamacpp, ollama, sglang, openai',
    },
    {
      rule: 'an api_key naming an unset variable',
      toml: `${ONE_NODE}api_key = "env:GPU_KEY"\n`,
      path: 'nodes[0].api_key',
      fragment: 'environment variable GPU_KEY is not set',
    },
    {
      rule: 'an empty literal api_key',
      toml: `${ONE_NODE}api_key = ""\n`,
      path: 'nodes[0].api_key',
      fragment: 'must not be empty',
    },
    { rule: 'an empty node group', toml: `${ONE_NODE}group = ""\n`, path: 'nodes[0].group', fragment: 'must not be empty' },
    {
      rule: 'a duplicate model name',
      toml: `[[models.available]]\nname = "m"\n[[models.available]]\nname = "m"\n${ONE_NODE}`,
      path: 'models.available[1].name',
      fragment: 'duplicate model name "m" (also models.available[0])',
    },
    {
      rule: "an alias equal to another model's name",
      toml: `[[models.available]]\nname = "m"\n[[models.available]]\nname = "n"\naliases = ["x", "m"]\n${ONE_NODE}`,
      path: 'models.available[1].aliases[1]',
      fragment: 'alias "m" is already the name of models.available[0]',
    },
    {
      rule: 'an alias equal to another alias',
      toml: `[[models.available]]\nname = "m"\naliases = ["x"]\n[[models.available]]\nname = "n"\naliases = ["x"]\n${ONE_NODE}`,
      path: 'models.available[1].aliases[0]',
      fragment: 'alias "x" is already used at models.available[0].aliases[0]',
    },
    {
      rule: "an alias repeating its own model's name",
      toml: `[[models.available]]\nname = "m"\naliases = ["m"]\n${ONE_NODE}`,
      path: 'models.available[0].aliases[0]',
      fragment: "repeats the model's own name",
    },
    {
      rule: 'an empty alias',
      toml: `[[models.available]]\nname = "m"\naliases = [""]\n${ONE_NODE}`,
      path: 'models.available[0].aliases[0]',
      fragment: 'must not be empty',
    },
    {
      rule: 'a default model that is not declared',
      toml: `[models]\ndefault = "gpt-4"\n[[models.available]]\nname = "m"\naliases = ["a"]\n${ONE_NODE}`,
      path: 'models.default',
      fragment: '"gpt-4" is not the name or alias of any [[models.available]] entry',
    },
    {
      rule: 'a model group that no node has',
      toml: `[[models.available]]\nname = "m"\ngroup = "big"\n${ONE_NODE}`,
      path: 'models.available[0].group',
      fragment: 'no node has group "big"',
    },
    { rule: 'a section written as a value', toml: `health = "fast"\n${ONE_NODE}`, path: 'health', fragment: 'must be a table' },
  ];
  for (const { rule, toml, path, fragment, env } of rules) {
    test(`reports ${rule} at ${path}`, () => {
      assertProblem(problems(toml, env), path, fragment);
    });
  }

  test('accepts a default model that is an alias of a declared model', () => {
    assert.equal(
      loaded(`[models]\ndefault = "a"\n[[models.available]]\nname = "m"\naliases = ["a"]\n${ONE_NODE}`).models.default,
      'a',
    );
  });
});

describe('loadConfig: unknown keys', () => {
  const levels: readonly (readonly [string, string, string])[] = [
    ['the top level', `listen = "127.0.0.1:8080"\n${ONE_NODE}`, 'listen'],
    ['[server]', `[server]\nlisen = "127.0.0.1:8080"\n${ONE_NODE}`, 'server.lisen'],
    ['[health]', `[health]\nintervall = "5s"\n${ONE_NODE}`, 'health.intervall'],
    ['[discovery]', `[discovery]\nenabled = true\n${ONE_NODE}`, 'discovery.enabled'],
    ['[upstream]', `[upstream]\nread_timeout = "5s"\n${ONE_NODE}`, 'upstream.read_timeout'],
    ['[models]', `[models]\ndefaults = "m"\n${ONE_NODE}`, 'models.defaults'],
    ['[[models.available]]', `[[models.available]]\nname = "m"\nalias = ["x"]\n${ONE_NODE}`, 'models.available[0].alias'],
    ['[[nodes]]', `${ONE_NODE}heft = 2\n`, 'nodes[0].heft'],
    ['a quoted key', `[server]\n"max body" = 1\n${ONE_NODE}`, 'server."max body"'],
  ];
  for (const [level, toml, path] of levels) {
    test(`reports an unknown key in ${level} at ${path}`, () => {
      assertProblem(problems(toml), path, 'unknown key');
    });
  }

  test('lists the keys the table accepts', () => {
    assertProblem(
      problems(`[health]\nintervall = "5s"\n${ONE_NODE}`),
      'health.intervall',
      'expected one of: interval, timeout, fail_threshold',
    );
  });

  test('reports each unknown key of one table as its own problem', () => {
    const found = problems(`[server]\na = 1\nb = 2\n${ONE_NODE}`);
    assert.deepEqual(
      found.map((problem) => problem.path),
      ['server.a', 'server.b'],
    );
  });
});

describe('loadConfig: reporting', () => {
  test('reports all problems together: three mistakes give three problems', () => {
    const found = problems('[server]\nlisten = "localhost"\n[health]\ninterval = 5\n[[nodes]]\nname = "a"\nurl = "ftp://a"\n');
    assert.deepEqual(found.map((problem) => problem.path).sort(), ['health.interval', 'nodes[0].url', 'server.listen']);
  });

  test('reports field problems and name clashes in the same pass', () => {
    const found = problems(`${ONE_NODE}[[nodes]]\nname = "gpu-a"\nurl = "http://b"\ncolour = "red"\n[health]\ntimeout = "0s"\n`);
    assert.deepEqual(found.map((problem) => problem.path).sort(), ['health.timeout', 'nodes[1].colour', 'nodes[1].name']);
  });

  test('turns a TOML syntax error into one whole-file problem with line and column', () => {
    const found = problems('[server]\nlisten = "127.0.0.1:8080\n');
    assert.equal(found.length, 1);
    assert.equal(found[0]?.path, '');
    assert.match(found[0]?.message ?? '', /line 2, column \d+/);
    assert.ok(!(found[0]?.message ?? '').includes('\n'), 'a problem is one line');
  });

  test('names the file in a TOML syntax error', async () => {
    const result = loadConfig('[server]\nlisten = "127.0.0.1:8080\n', {}, '/etc/switchyard/switchyard.toml');
    assert.ok(!result.ok);
    assert.match(result.problems[0]?.message ?? '', /^\/etc\/switchyard\/switchyard\.toml: .*line 2, column \d+/);
    const file = await loadConfigFile(new URL('../../../package.json', import.meta.url).pathname, {});
    assert.ok(!file.ok);
    assert.match(file.problems[0]?.message ?? '', /package\.json: .*line 1/);
  });

  test('never includes an api_key value in problem messages', () => {
    const secret = 'sk-do-not-print-0123456789';
    const found = problems(
      `${ONE_NODE}api_key = "${secret}"\nkind = 7\nname2 = "${secret}"\n[[nodes]]\nname = "b"\nurl = "http://b"\napi_key = 42\n`,
    );
    assert.ok(found.length >= 3);
    assert.ok(!formatProblems(found).includes(secret));
  });

  test('formats one "path: message" line per problem, without a prefix for whole-file problems', () => {
    const text = formatProblems([
      { path: '', message: 'Invalid TOML document' },
      { path: 'nodes[0].url', message: 'must be an http(s) URL' },
    ]);
    assert.equal(text, 'Invalid TOML document\nnodes[0].url: must be an http(s) URL');
  });
});

describe('loadConfigFile', () => {
  test('loads a file from disk', async () => {
    const result = await loadConfigFile(new URL('../../fixtures/configs/minimal.toml', import.meta.url).pathname, {});
    assert.ok(result.ok);
    assert.equal(result.config.nodes[0]?.name, 'local');
  });

  test('turns an unreadable file into a whole-file problem instead of throwing', async () => {
    const result = await loadConfigFile('/nonexistent/switchyard.toml', {});
    assert.ok(!result.ok);
    assert.equal(result.problems.length, 1);
    assert.equal(result.problems[0]?.path, '');
    assert.match(result.problems[0]?.message ?? '', /cannot read config file: ENOENT/);
  });
});

test('security keys: api_keys name a missing variable, and the admin listener must differ from the main one', () => {
  const node = '[[nodes]]\nname = "a"\nurl = "http://10.0.0.1:8000"\n';
  const missing = loadConfig(`[server]\napi_keys = ["env:NOPE"]\n${node}`, {});
  assert.ok(!missing.ok);
  assert.deepEqual(
    missing.problems.map((p) => `${p.path}: ${p.message}`),
    ['server.api_keys[0]: environment variable NOPE is not set'],
  );
  const clash = loadConfig(`[server]\nlisten = "127.0.0.1:8080"\n[admin]\nlisten = "127.0.0.1:8080"\n${node}`, {});
  assert.ok(!clash.ok);
  assert.match(
    clash.problems.map((p) => `${p.path}: ${p.message}`).join('\n'),
    /^admin\.listen: must differ from server\.listen/,
  );
});

test('wake: a Wake-on-LAN MAC (with the default broadcast) or a command, checked at load', () => {
  const base = '[[nodes]]\nname = "gpu"\nurl = "http://10.0.0.9:8000"\n';
  const wol = loadConfig(`${base}wake = { mac = "AA-BB-CC-DD-EE-FF" }\nwake_timeout = "90s"\n`, {});
  assert.ok(wol.ok);
  assert.deepEqual(wol.config.nodes[0]?.wake, {
    kind: 'wol',
    mac: 'aa:bb:cc:dd:ee:ff',
    broadcast: { host: '255.255.255.255', port: 9 },
  });
  assert.equal(wol.config.nodes[0]?.wakeTimeoutMs, 90_000);
  const command = loadConfig(`${base}wake = { command = ["/usr/local/bin/wake-gpu1", "--fast"] }\n`, {});
  assert.ok(command.ok);
  assert.deepEqual(command.config.nodes[0]?.wake, { kind: 'command', argv: ['/usr/local/bin/wake-gpu1', '--fast'] });
  const cases: [string, RegExp][] = [
    ['wake = { mac = "aa:bb:cc" }', /^nodes\[0\]\.wake: mac must be a MAC address/],
    ['wake = { mac = "aa:bb:cc:dd:ee:ff", command = ["x"] }', /^nodes\[0\]\.wake: give either mac/],
    ['wake = { command = [] }', /^nodes\[0\]\.wake: command must name a program/],
    ['wake = { mac = "aa:bb:cc:dd:ee:ff", broadcast = "10.0.0.255" }', /^nodes\[0\]\.wake: broadcast must be/],
    ['wake = { magic = true }', /^nodes\[0\]\.wake\.magic: unknown key/],
  ];
  for (const [line, message] of cases) {
    const result = loadConfig(`${base}${line}\n`, {});
    assert.ok(!result.ok, line);
    assert.match(result.problems.map((p) => `${p.path}: ${p.message}`).join('\n'), message, line);
  }
});

describe('loadConfig: selection policies and node weights', () => {
  test('reads [routing] policy, a model own policy and a node weight', () => {
    const config = loaded(`
[routing]
policy = "weighted"
affinity_header = "X-Conversation"
affinity_prefix_chars = 64
affinity_epsilon = 0.5
[[models.available]]
name = "chat"
policy = "round-robin"
${ONE_NODE}weight = 2.5
`);
    assert.equal(config.routing.policy, 'weighted');
    assert.deepEqual(
      [config.routing.affinityHeader, config.routing.affinityPrefixChars, config.routing.affinityEpsilon],
      ['x-conversation', 64, 0.5],
    );
    assert.equal(config.models.available[0]?.policy, 'round-robin');
    assert.equal(config.nodes[0]?.weight, 2.5);
  });

  const bad: readonly (readonly [string, string, string])[] = [
    ['an unknown policy', `[routing]\npolicy = "fastest"\n${ONE_NODE}`, 'routing.policy'],
    [
      "an unknown model's policy",
      `[[models.available]]\nname = "m"\npolicy = "random"\n${ONE_NODE}`,
      'models.available[0].policy',
    ],
    ['a zero weight', `${ONE_NODE}weight = 0\n`, 'nodes[0].weight'],
    ['a negative weight', `${ONE_NODE}weight = -1\n`, 'nodes[0].weight'],
    ['a weight that is text', `${ONE_NODE}weight = "2"\n`, 'nodes[0].weight'],
    ['an affinity header with a space', `[routing]\naffinity_header = "x session"\n${ONE_NODE}`, 'routing.affinity_header'],
    ['a zero affinity epsilon', `[routing]\naffinity_epsilon = 0\n${ONE_NODE}`, 'routing.affinity_epsilon'],
    ['a zero affinity prefix', `[routing]\naffinity_prefix_chars = 0\n${ONE_NODE}`, 'routing.affinity_prefix_chars'],
  ];
  for (const [what, toml, path] of bad) {
    test(`reports ${what} at ${path}`, () => {
      const expected = path.endsWith('policy')
        ? 'must be one of'
        : path.endsWith('header')
          ? 'header name'
          : path.endsWith('chars')
            ? 'at least 1'
            : 'greater than 0';
      assertProblem(problems(toml), path, expected);
    });
  }
});
