import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addLoadFigures, loadMetricsPath, readLoadFigures, serverKind, type LoadDialect } from '#src/kinds/index.ts';

const dialect = (kind: Parameters<typeof serverKind>[0]): LoadDialect => {
  const load = serverKind(kind).load;
  assert.ok(load !== undefined, `${kind} has load metrics`);
  return load;
};

const VLLM = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="a"} 2.0
vllm:num_requests_running{engine="0",model_name="b"} 1.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="a"} 7.0
vllm:num_requests_waiting{engine="0",model_name="b"} 0.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="a"} 0.25
vllm:kv_cache_usage_perc{engine="0",model_name="b"} 0.5
`;
const VLLM_OLD =
  'vllm:num_requests_running{model_name="a"} 1\nvllm:num_requests_waiting{model_name="a"} 0\nvllm:gpu_cache_usage_perc{model_name="a"} 0.75\n';
const LLAMA =
  '# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 1\n# TYPE llamacpp:requests_deferred gauge\nllamacpp:requests_deferred 4\n';
const SGLANG =
  'sglang:num_running_reqs{model_name="q"} 3\nsglang:num_queue_reqs{model_name="q"} 2\nsglang:token_usage{model_name="q"} 0.1\n';

test('each kind reads its own gauges, summed over models and engines, the fullest KV cache', () => {
  const cases: [string, LoadDialect, string, unknown][] = [
    ['vLLM (two models)', dialect('vllm'), VLLM, { running: 3, waiting: 7, kvUsage: 0.5 }],
    ['vLLM before kv_cache_usage_perc', dialect('vllm'), VLLM_OLD, { running: 1, waiting: 0, kvUsage: 0.75 }],
    ['llama.cpp (no KV gauge in current builds)', dialect('llamacpp'), LLAMA, { running: 1, waiting: 4, kvUsage: undefined }],
    ['SGLang', dialect('sglang'), SGLANG, { running: 3, waiting: 2, kvUsage: 0.1 }],
    ['auto reads whichever kind answered', dialect('auto'), SGLANG, { running: 3, waiting: 2, kvUsage: 0.1 }],
    ['another kind`s names are not this kind`s', dialect('vllm'), LLAMA, undefined],
    ['an HTML page', dialect('vllm'), '<html>nope</html>', undefined],
    [
      'NaN and negative values are left out',
      dialect('llamacpp'),
      'llamacpp:requests_processing NaN\nllamacpp:requests_deferred -3\n',
      { running: 0, waiting: 0, kvUsage: undefined },
    ],
  ];
  for (const [what, d, text, expected] of cases) assert.deepEqual(readLoadFigures(text, d), expected, what);
});

test('Ollama and plain OpenAI servers export no load metrics', () => {
  assert.equal(serverKind('ollama').load, undefined);
  assert.equal(serverKind('openai').load, undefined);
});

test('a router is asked about one model by its query; figures of several models add up', () => {
  assert.equal(loadMetricsPath(), '/metrics');
  assert.equal(loadMetricsPath('org/m 1'), '/metrics?model=org%2Fm%201&autoload=false');
  assert.deepEqual(addLoadFigures([]), { running: 0, waiting: 0, kvUsage: undefined });
  assert.deepEqual(
    addLoadFigures([
      { running: 1, waiting: 2, kvUsage: undefined },
      { running: 3, waiting: 0, kvUsage: 0.4 },
    ]),
    { running: 4, waiting: 2, kvUsage: 0.4 },
  );
});
