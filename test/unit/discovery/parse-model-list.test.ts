import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseModelList } from '#src/discovery/parse-model-list.ts';
import type { DiscoveredModel } from '#src/discovery/discovered-model.ts';
import type { NodeKind } from '#src/config/types.ts';

// Bodies below follow PROTOCOLS.md §1.2, §1.3, §2.1, §3.1, §4 and §7 (trimmed where noted).

const llamacppSingle = {
  models: [
    {
      name: 'my-alias',
      model: 'my-alias',
      modified_at: '',
      size: '',
      digest: '',
      type: 'model',
      description: '',
      tags: [''],
      capabilities: ['completion'],
      parameters: '',
      details: { parent_model: '', format: 'gguf', family: '', families: [''], parameter_size: '', quantization_level: '' },
    },
  ],
  object: 'list',
  data: [
    {
      id: 'my-alias',
      aliases: ['my-alias'],
      tags: [],
      object: 'model',
      created: 1764460000,
      owned_by: 'llamacpp',
      meta: {
        vocab_type: 2,
        n_vocab: 128256,
        n_ctx: 8192,
        n_ctx_train: 131072,
        n_embd: 4096,
        n_params: 8030261312,
        size: 4912898304,
        ftype: 'Q4_K - Medium',
      },
    },
  ],
};

const routerArgs = ['/usr/local/bin/llama-server', '--host', '127.0.0.1', '--port', '34721', '--alias', 'x'];
const llamacppRouter = {
  data: [
    {
      id: 'ggml-org/gemma-3-4b-it-GGUF:Q4_K_M',
      aliases: ['gemma'],
      tags: ['local'],
      object: 'model',
      owned_by: 'llamacpp',
      created: 1764460000,
      status: { value: 'loaded', args: routerArgs, preset: '[ggml-org/gemma-3-4b-it-GGUF:Q4_K_M]\nc = 8192\n' },
      architecture: { input_modalities: ['text', 'image'], output_modalities: ['text'] },
      source: 'cache',
      can_remove: true,
      meta: {
        vocab_type: 2,
        n_vocab: 262144,
        n_ctx: 8192,
        n_ctx_train: 131072,
        n_embd: 2560,
        n_params: 3880000000,
        size: 2490000000,
        ftype: 'Q4_K - Medium',
      },
    },
    {
      id: 'qwen3-8b',
      aliases: [],
      tags: [],
      object: 'model',
      owned_by: 'llamacpp',
      created: 1764460000,
      status: { value: 'unloaded', args: ['...'], failed: true, exit_code: 1 },
      architecture: { input_modalities: ['text'], output_modalities: ['text'] },
      source: 'models_dir',
      can_remove: false,
    },
    {
      id: 'tiny-llama-c',
      aliases: ['gpt-4o-mini', 'tiny-a'],
      tags: ['chat', 'small'],
      object: 'model',
      owned_by: 'llamacpp',
      created: 1796009735,
      status: { value: 'loading', args: routerArgs, preset: '...' },
      source: 'preset',
      can_remove: false,
    },
    {
      id: 'tiny-llama-d',
      aliases: [],
      tags: [],
      object: 'model',
      owned_by: 'llamacpp',
      created: 1796009735,
      status: { value: 'sleeping', args: routerArgs },
      source: 'models_dir',
      can_remove: false,
      meta: { n_ctx: 512 },
    },
  ],
  object: 'list',
};

const vllmWithLora = {
  object: 'list',
  data: [
    {
      id: 'meta-llama/Llama-3.1-8B-Instruct',
      object: 'model',
      created: 1764460000,
      owned_by: 'vllm',
      root: 'meta-llama/Llama-3.1-8B-Instruct',
      parent: null,
      max_model_len: 8192,
      permission: [
        {
          id: 'modelperm-abc',
          object: 'model_permission',
          created: 1764460000,
          allow_create_engine: false,
          allow_sampling: true,
          allow_logprobs: true,
          allow_search_indices: false,
          allow_view: true,
          allow_fine_tuning: false,
          organization: '*',
          group: null,
          is_blocking: false,
        },
      ],
    },
    {
      id: 'my-lora',
      object: 'model',
      created: 1764460000,
      owned_by: 'vllm',
      root: '/adapters/my-lora',
      parent: 'meta-llama/Llama-3.1-8B-Instruct',
      max_model_len: null,
      permission: [],
    },
  ],
};

const sglang = {
  object: 'list',
  data: [
    {
      id: 'Qwen/Qwen2.5-7B-Instruct',
      object: 'model',
      created: 1764460000,
      owned_by: 'sglang',
      root: 'Qwen/Qwen2.5-7B-Instruct',
      max_model_len: 32768,
      parent: null,
    },
  ],
};

function model(id: string, fields: Partial<DiscoveredModel> = {}): DiscoveredModel {
  return { id, loaded: true, status: undefined, contextTokens: undefined, aliases: [], ...fields };
}

function parsedModels(kind: NodeKind, body: unknown): readonly DiscoveredModel[] {
  const outcome = parseModelList(kind, body);
  assert.ok(outcome.ok, outcome.ok ? '' : outcome.error);
  return outcome.models;
}

function parseError(kind: NodeKind, body: unknown): string {
  const outcome = parseModelList(kind, body);
  assert.equal(outcome.ok, false, 'expected a parse failure');
  return outcome.ok ? '' : outcome.error;
}

test('reads a single-model llama.cpp listing with per-slot n_ctx and no alias echoing the id', () => {
  assert.deepEqual(parsedModels('llamacpp', llamacppSingle), [model('my-alias', { contextTokens: 8192 })]);
});

test('reads llama.cpp router entries as loaded only when status.value is "loaded", keeping the status', () => {
  assert.deepEqual(parsedModels('llamacpp', llamacppRouter), [
    // Their args set neither -kvu nor -np: llama.cpp's automatic slot count, unified KV.
    model('ggml-org/gemma-3-4b-it-GGUF:Q4_K_M', { status: 'loaded', contextTokens: 8192, aliases: ['gemma'], kv: 'unified' }),
    // `unloaded` with `failed: true, exit_code`: a child that exited non-zero (issue 41), read as `failed`.
    model('qwen3-8b', { loaded: false, status: 'failed', kv: 'unified', exitCode: 1 }),
    model('tiny-llama-c', { loaded: false, status: 'loading', aliases: ['gpt-4o-mini', 'tiny-a'], kv: 'unified' }),
    model('tiny-llama-d', { loaded: false, status: 'sleeping', contextTokens: 512, kv: 'unified' }),
  ]);
});

test('reads a router listing the same way when the node kind is auto', () => {
  assert.deepEqual(parsedModels('auto', llamacppRouter), parsedModels('llamacpp', llamacppRouter));
});

test('treats vLLM LoRA cards as models and takes max_model_len as the context size', () => {
  assert.deepEqual(parsedModels('vllm', vllmWithLora), [
    model('meta-llama/Llama-3.1-8B-Instruct', { contextTokens: 8192 }),
    model('my-lora'),
  ]);
});

test('reads an SGLang card with its max_model_len', () => {
  assert.deepEqual(parsedModels('sglang', sglang), [model('Qwen/Qwen2.5-7B-Instruct', { contextTokens: 32768 })]);
});

test('reads an Ollama listing', () => {
  const body = { object: 'list', data: [{ id: 'llama3.2:latest', object: 'model', created: 1755800000, owned_by: 'library' }] };
  assert.deepEqual(parsedModels('ollama', body), [model('llama3.2:latest')]);
});

test('counts Ollama "data": null as an empty list for kinds ollama and auto', () => {
  assert.deepEqual(parsedModels('ollama', { object: 'list', data: null }), []);
  assert.deepEqual(parsedModels('auto', { object: 'list', data: null }), []);
});

test('rejects "data": null from kinds that never send it', () => {
  assert.match(parseError('vllm', { object: 'list', data: null }), /'data' is null, not an array/);
});

test('accepts an empty data array from any kind', () => {
  assert.deepEqual(parsedModels('openai', { object: 'list', data: [] }), []);
});

test('rejects a body without a data field', () => {
  assert.match(parseError('vllm', { object: 'list' }), /no 'data' field/);
});

test('rejects an error object sent with HTTP 200 and quotes its message', () => {
  const error = parseError('llamacpp', { error: { code: 503, message: 'Loading model', type: 'unavailable_error' } });
  assert.match(error, /no 'data' field/);
  assert.match(error, /Loading model/);
});

test('rejects a body that is not an object', () => {
  assert.match(parseError('auto', [{ id: 'a' }]), /not a JSON object \(got an array\)/);
  assert.match(parseError('auto', 'ok'), /not a JSON object \(got a string\)/);
  assert.match(parseError('auto', null), /not a JSON object \(got null\)/);
});

test('rejects an entry without a non-empty string id and names its index', () => {
  assert.match(parseError('vllm', { data: [{ id: 'a' }, { object: 'model' }] }), /entry 1 has no non-empty string 'id'/);
  assert.match(parseError('vllm', { data: [{ id: '' }] }), /entry 0 has no/);
  assert.match(parseError('vllm', { data: [{ id: 7 }] }), /entry 0 has no/);
  assert.match(parseError('vllm', { data: ['a'] }), /entry 0 is a string, not an object/);
});

test('collapses duplicate ids to the first entry', () => {
  const body = { data: [{ id: 'a', max_model_len: 100 }, { id: 'b' }, { id: 'a', max_model_len: 200 }] };
  assert.deepEqual(parsedModels('vllm', body), [model('a', { contextTokens: 100 }), model('b')]);
});

test('ignores context sizes that are not positive numbers', () => {
  const body = {
    data: [
      { id: 'a', max_model_len: 0 },
      { id: 'b', meta: { n_ctx: 0 } },
      { id: 'c', max_model_len: '4096' },
      { id: 'd', meta: null },
    ],
  };
  assert.deepEqual(parsedModels('auto', body), [model('a'), model('b'), model('c'), model('d')]);
});

test('keeps only distinct string aliases other than the id', () => {
  const body = { data: [{ id: 'a', aliases: ['a', 'x', 3, 'x', '', 'y'] }] };
  assert.deepEqual(parsedModels('llamacpp', body), [model('a', { aliases: ['x', 'y'] })]);
});

test('treats a null router status as no status', () => {
  assert.deepEqual(parsedModels('llamacpp', { data: [{ id: 'a', status: null }] }), [model('a')]);
});

test('treats a malformed router status as not loaded', () => {
  assert.deepEqual(parsedModels('llamacpp', { data: [{ id: 'a', status: 'loaded' }] }), [model('a', { loaded: false })]);
});
