// Detection of a server's kind from its own answers (switchyard init), against the shapes recorded
// in PROTOCOLS.md (§1.2, §1.3, §1.5, §2.1, §3.1, §4, §6, §7): each kind's detector alone, and
// `auto`'s order (the specific kinds first, the plain OpenAI listing last).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonAnswer } from '#src/core/bounded-json.ts';
import type { NodeKind } from '#src/config/index.ts';
import { serverKind, type Detection } from '#src/kinds/index.ts';

type Answers = Readonly<Record<string, JsonAnswer>>;
const ok = (body: unknown, status = 200): JsonAnswer => ({ ok: true, status, body });
const refused: JsonAnswer = { ok: false, status: undefined, error: 'connect ECONNREFUSED 127.0.0.1:1' };
const notFound = ok({ error: { message: 'File Not Found', type: 'not_found_error', code: 404 } }, 404);

// §7, single mode (a real llama-server, build b10587).
const LLAMA_SINGLE: Answers = {
  '/v1/models': ok({
    models: [{ name: 'models/tiny-llama-a.gguf', model: 'models/tiny-llama-a.gguf', type: 'model' }],
    object: 'list',
    data: [
      {
        id: 'models/tiny-llama-a.gguf',
        aliases: ['models/tiny-llama-a.gguf'],
        tags: [],
        object: 'model',
        created: 1796009474,
        owned_by: 'llamacpp',
        meta: { n_ctx: 512 },
      },
    ],
  }),
  '/props': ok({
    default_generation_settings: { params: {}, n_ctx: 512 },
    total_slots: 2,
    model_alias: 'models/tiny-llama-a.gguf',
    build_info: 'b10587-3f545bec',
  }),
  '/api/version': notFound,
};
// §7, router mode.
const LLAMA_ROUTER: Answers = {
  '/v1/models': ok({
    data: [
      {
        id: 'tiny-llama-a',
        aliases: [],
        tags: [],
        object: 'model',
        owned_by: 'llamacpp',
        created: 1796009732,
        status: { value: 'unloaded', args: [] },
        source: 'models_dir',
        can_remove: false,
      },
    ],
    object: 'list',
  }),
  '/props': ok({
    role: 'router',
    max_instances: 4,
    models_autoload: true,
    model_alias: 'llama-server',
    model_path: 'none',
    default_generation_settings: { params: null, n_ctx: 0 },
  }),
  '/api/version': notFound,
};
// §2.1.
const VLLM: Answers = {
  '/v1/models': ok({
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
        permission: [],
      },
    ],
  }),
  '/props': ok({ detail: 'Not Found' }, 404),
  '/api/version': ok({ detail: 'Not Found' }, 404),
};
// §4.
const SGLANG: Answers = {
  '/v1/models': ok({
    object: 'list',
    data: [
      {
        id: 'Qwen/Qwen2.5-7B-Instruct',
        object: 'model',
        created: 1764460000,
        owned_by: 'sglang',
        root: 'Qwen/Qwen2.5-7B-Instruct',
        max_model_len: 32768,
      },
    ],
  }),
  '/props': ok({ detail: 'Not Found' }, 404),
  '/api/version': ok({ detail: 'Not Found' }, 404),
};
// §3.1; an Ollama with no model answers `data: null`, and /props is a plain-text 404.
const OLLAMA: Answers = {
  '/v1/models': ok({
    object: 'list',
    data: [{ id: 'llama3.2:latest', object: 'model', created: 1755800000, owned_by: 'library' }],
  }),
  '/props': { ok: false, status: 404, error: 'answer is not JSON (HTTP 404)' },
  '/api/version': ok({ version: '0.12.6' }),
};
const OLLAMA_EMPTY: Answers = { ...OLLAMA, '/v1/models': ok({ object: 'list', data: null }) };
// §6: OpenAI itself, or any proxy that speaks only the standard surface.
const OPENAI: Answers = {
  '/v1/models': ok({ object: 'list', data: [{ id: 'gpt-4o', object: 'model', created: 1715367049, owned_by: 'system' }] }),
  '/props': notFound,
  '/api/version': notFound,
};
// A llama-server with an API key: /props needs it (401), the listing does not (§1.6).
const LLAMA_KEYED: Answers = {
  ...LLAMA_ROUTER,
  '/props': ok({ error: { message: 'Invalid API Key', type: 'authentication_error', code: 401 } }, 401),
};
const NOT_A_SERVER: Answers = {
  '/v1/models': { ok: false, status: 200, error: 'answer is not JSON (HTTP 200)' },
  '/props': { ok: false, status: 404, error: 'answer is not JSON (HTTP 404)' },
  '/api/version': { ok: false, status: 404, error: 'answer is not JSON (HTTP 404)' },
};
const LOADING: Answers = {
  '/v1/models': ok({ error: { message: 'Loading model', type: 'unavailable_error', code: 503 } }, 503),
  '/props': ok({ error: { message: 'Loading model', type: 'unavailable_error', code: 503 } }, 503),
  '/api/version': ok({ error: { message: 'Loading model', type: 'unavailable_error', code: 503 } }, 503),
};
const DOWN: Answers = { '/v1/models': refused, '/props': refused, '/api/version': refused };

function detect(kind: NodeKind, answers: Answers): Pick<Detection, 'kind' | 'role'> | undefined {
  const found = serverKind(kind).detector.detect((path) => answers[path]);
  return found === undefined ? undefined : { kind: found.kind, role: found.role };
}

test('auto detects each kind from its recorded answers, or nothing', () => {
  const table: [string, Answers, Pick<Detection, 'kind' | 'role'> | undefined][] = [
    ['llama.cpp single server', LLAMA_SINGLE, { kind: 'llamacpp', role: 'single' }],
    ['llama.cpp router', LLAMA_ROUTER, { kind: 'llamacpp', role: 'router' }],
    ['llama.cpp router, /props behind an API key', LLAMA_KEYED, { kind: 'llamacpp', role: 'router' }],
    ['vLLM', VLLM, { kind: 'vllm', role: 'unknown' }],
    ['SGLang', SGLANG, { kind: 'sglang', role: 'unknown' }],
    ['Ollama', OLLAMA, { kind: 'ollama', role: 'unknown' }],
    ['Ollama with no model', OLLAMA_EMPTY, { kind: 'ollama', role: 'unknown' }],
    ['plain OpenAI-compatible', OPENAI, { kind: 'openai', role: 'unknown' }],
    ['not a model server', NOT_A_SERVER, undefined],
    ['still loading (503 everywhere)', LOADING, undefined],
    ['not answering', DOWN, undefined],
  ];
  for (const [name, answers, expected] of table) assert.deepEqual(detect('auto', answers), expected, name);
});

test("each kind's detector recognises only its own kind; openai takes any OpenAI listing", () => {
  const samples: Readonly<Record<string, Answers>> = {
    LLAMA_SINGLE,
    LLAMA_ROUTER,
    VLLM,
    SGLANG,
    OLLAMA,
    OPENAI,
    NOT_A_SERVER,
    DOWN,
  };
  const recognised: Readonly<Record<Exclude<NodeKind, 'auto'>, readonly string[]>> = {
    llamacpp: ['LLAMA_SINGLE', 'LLAMA_ROUTER'],
    vllm: ['VLLM'],
    sglang: ['SGLANG'],
    ollama: ['OLLAMA'],
    openai: ['LLAMA_SINGLE', 'LLAMA_ROUTER', 'VLLM', 'SGLANG', 'OLLAMA', 'OPENAI'],
  };
  for (const [kind, expected] of Object.entries(recognised) as [Exclude<NodeKind, 'auto'>, readonly string[]][]) {
    const hits = Object.entries(samples)
      .filter(([, answers]) => detect(kind, answers)?.kind === kind)
      .map(([name]) => name);
    assert.deepEqual(hits, expected, kind);
  }
});

test('every detector asks only GETs that never load a model; auto asks each path once', () => {
  const auto = serverKind('auto').detector.paths;
  assert.deepEqual([...auto].sort(), ['/api/version', '/props', '/v1/models']);
  for (const path of auto) assert.ok(!path.includes('?'), `${path} asks about no model`);
});

test('a detection says what gave the kind away', () => {
  const found = serverKind('auto').detector.detect((path) => LLAMA_ROUTER[path]);
  assert.equal(found?.evidence, 'GET /props says role "router"');
});
