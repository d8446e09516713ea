import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { parseDurationMs } from '#src/sim/duration.ts';
import { parseFleetConfig } from '#src/sim/fleet-config.ts';
import { resolveNodeSpec, SIM_DEFAULTS } from '#src/sim/spec.ts';

function problemsOf(text: string): string[] {
  const result = parseFleetConfig(text);
  assert.equal(result.ok, false, 'expected problems');
  return result.ok ? [] : result.problems.map((p) => `${p.path}: ${p.message}`);
}

test('parses durations with ms, s and m units', () => {
  const cases: [string, number | undefined][] = [
    ['50ms', 50],
    ['2s', 2000],
    ['1.5s', 1500],
    ['1m', 60_000],
    [' 0ms ', 0],
    ['50', undefined],
    ['2h', undefined],
    ['-1s', undefined],
  ];
  for (const [text, expected] of cases) assert.equal(parseDurationMs(text), expected, text);
});

test('reads every node key into the spec', () => {
  const result = parseFleetConfig(`
[[node]]
name = "r"
kind = "llamacpp-router"
port = 0
context = 2048
slots = 2
kv = "per-slot"
ttft = "5ms"
tokens_per_second = 500
load_time = "1s"
request_end_lag = "30ms"
unload_time = "20ms"
models_max = 1
autoload = false
api_key = "k"
metrics = false
version = "b7000-1a2b3c4"
[[node.model]]
id = "a"
aliases = ["alpha"]
context = 1024
slots = 3
status = "loaded"
size = 1000
`);
  assert.equal(result.ok, true);
  if (!result.ok) return;
  const [node] = result.spec.nodes;
  assert.deepEqual(node, {
    kind: 'llamacpp-router',
    models: [{ id: 'a', aliases: ['alpha'], contextTokens: 1024, slots: 3, status: 'loaded', sizeBytes: 1000 }],
    name: 'r',
    port: 0,
    contextTokens: 2048,
    slots: 2,
    kv: 'per-slot',
    ttftMs: 5,
    tokensPerSecond: 500,
    loadTimeMs: 1000,
    requestEndLagMs: 30,
    unloadTimeMs: 20,
    modelsMax: 1,
    autoload: false,
    apiKey: 'k',
    metrics: false,
    version: 'b7000-1a2b3c4',
  });
});

test('fills defaults: names by kind and index, router models unloaded, others loaded', () => {
  const result = parseFleetConfig(
    '[[node]]\nkind = "vllm"\nmodels = ["m"]\n[[node]]\nkind = "llamacpp-router"\nmodels = ["a"]\n',
  );
  assert.equal(result.ok, true);
  if (!result.ok) return;
  const [vllm, router] = result.spec.nodes.map((spec, index) => resolveNodeSpec(spec, index));
  assert.equal(vllm?.name, 'vllm-0');
  assert.equal(vllm?.models[0]?.status, 'loaded');
  assert.equal(vllm?.models[0]?.contextTokens, SIM_DEFAULTS.contextTokens);
  assert.equal(vllm?.ttftMs, SIM_DEFAULTS.ttftMs);
  assert.equal(router?.name, 'llamacpp-router-1');
  assert.equal(router?.models[0]?.status, 'unloaded');
  assert.equal(router?.modelsMax, 4);
});

test('names each problem by its key path', () => {
  const problems = problemsOf(`
[[node]]
kind = "vllm"
models = ["m"]
[[node]]
kind = "tgi"
models = ["m"]
colour = "red"
ttft = "soon"
port = 70000
`);
  assert.ok(
    problems.some((p) => p.startsWith('node[1].kind: ')),
    problems.join('\n'),
  );
  assert.ok(problems.includes('node[1].colour: unknown key'), problems.join('\n'));
  assert.ok(
    problems.some((p) => p.startsWith('node[1].ttft: not a duration')),
    problems.join('\n'),
  );
  assert.ok(
    problems.some((p) => p.startsWith('node[1].port: ')),
    problems.join('\n'),
  );
  assert.ok(!problems.some((p) => p.startsWith('node[0]')), problems.join('\n'));
});

test('rejects unknown keys in model tables and at the top level', () => {
  const problems = problemsOf('extra = 1\n[[node]]\nkind = "vllm"\n[[node.model]]\nid = "m"\nctx = 5\n');
  assert.ok(problems.includes('extra: unknown key'), problems.join('\n'));
  assert.ok(problems.includes('node[0].model[0].ctx: unknown key'), problems.join('\n'));
});

test('checks the rules between fields', () => {
  const cases: [string, string][] = [
    ['[[node]]\nkind = "vllm"\n', 'node[0].models: a node needs at least one model'],
    ['[[node]]\nkind = "llamacpp"\nmodels = ["a", "b"]\n', 'node[0].models: a llamacpp node serves exactly one model'],
    ['[[node]]\nkind = "sglang"\nmodels = ["a", "b"]\n', 'node[0].models: a sglang node serves exactly one model'],
    ['[[node]]\nkind = "vllm"\nmodels = ["a", "a"]\n', "node[0].models[1]: model name 'a' is used twice"],
    [
      '[[node]]\nkind = "vllm"\n[[node.model]]\nid = "a"\nstatus = "unloaded"\n',
      'node[0].model[0].status: a vllm model is always loaded',
    ],
    [
      '[[node]]\nkind = "ollama"\n[[node.model]]\nid = "a"\nstatus = "sleeping"\n',
      'node[0].model[0].status: an ollama model starts loaded or unloaded',
    ],
    [
      '[[node]]\nkind = "llamacpp-router"\nmodels_max = 1\n[[node.model]]\nid = "a"\nstatus = "loaded"\n[[node.model]]\nid = "b"\nstatus = "loaded"\n',
      'node[0].models_max: 2 models start running but models_max is 1',
    ],
    [
      '[[node]]\nkind = "vllm"\nmodels = ["a"]\n[[node.model]]\nid = "b"\n',
      'node[0].models: use either models = [...] or [[node.model]], not both',
    ],
    [
      '[[node]]\nname = "x"\nkind = "vllm"\nmodels = ["a"]\n[[node]]\nname = "x"\nkind = "vllm"\nmodels = ["a"]\n',
      "node[1].name: duplicate node name 'x'",
    ],
    ['', 'node: the file defines no [[node]] table'],
    ['node = []\n', 'node: the file defines no [[node]] table'],
  ];
  for (const [text, expected] of cases) assert.deepEqual(problemsOf(text), [expected], text);
});

test('reports a TOML syntax error with its line', () => {
  const [problem] = problemsOf('[[node]]\nkind = \n');
  assert.match(problem ?? '', /^\(syntax\): .*line 2/);
});

test('the example fleet in examples/fleet.toml is valid and has one node of every kind', async () => {
  const text = await readFile(new URL('../../../examples/fleet.toml', import.meta.url), 'utf8');
  const result = parseFleetConfig(text);
  assert.equal(result.ok, true, result.ok ? '' : result.problems.map((p) => `${p.path}: ${p.message}`).join('\n'));
  if (!result.ok) return;
  assert.deepEqual(
    new Set(result.spec.nodes.map((n) => n.kind)),
    new Set(['vllm', 'llamacpp', 'llamacpp-router', 'ollama', 'sglang', 'openai']),
  );
});

test('reads answers and prefix_cache_ttft, and checks that the prompt cache is a llama.cpp one within ttft', () => {
  const result = parseFleetConfig(
    '[[node]]\nkind = "llamacpp"\nmodels = ["m"]\nttft = "1s"\nanswers = "natural"\nprefix_cache_ttft = "100ms"\n',
  );
  assert.equal(result.ok, true);
  if (!result.ok) return;
  const [node] = result.spec.nodes;
  assert.equal(node?.answers, 'natural');
  assert.equal(node?.prefixCacheTtftMs, 100);
  const resolved = resolveNodeSpec({ kind: 'vllm', models: ['m'] });
  assert.deepEqual([resolved.answers, resolved.prefixCacheTtftMs], [SIM_DEFAULTS.answers, undefined]);
  assert.deepEqual(problemsOf('[[node]]\nkind = "vllm"\nmodels = ["m"]\nprefix_cache_ttft = "5ms"\n'), [
    'node[0].prefix_cache_ttft: only the llama.cpp kinds simulate the prompt cache',
  ]);
  assert.deepEqual(problemsOf('[[node]]\nkind = "llamacpp"\nmodels = ["m"]\nttft = "10ms"\nprefix_cache_ttft = "20ms"\n'), [
    'node[0].prefix_cache_ttft: must be between 0 and ttft (10ms)',
  ]);
  assert.equal(
    problemsOf('[[node]]\nkind = "vllm"\nmodels = ["m"]\nanswers = "long"\n')[0]?.startsWith('node[0].answers: '),
    true,
  );
});
