// The kind × endpoint → first version table, and the verdict on a node's stated version: a version
// known to predate an endpoint excludes the node before any request; an unknown or unreadable one
// never does (the node is asked, and a route-level 404 teaches the rest).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { InferenceEndpoint, NodeKind } from '#src/config/index.ts';
import { firstVersion, kindOfNode, predatesEndpoint, servedEndpoints, versionDialect, versionNumbers } from '#src/kinds/index.ts';

test('versions read as numbers, each kind its own way', () => {
  const rows: readonly (readonly [NodeKind, string, readonly number[] | undefined])[] = [
    ['llamacpp', 'b10587-3f545bec', [10587]],
    ['llamacpp', 'b7187', [7187]],
    ['llamacpp', '3f545bec', undefined],
    ['llamacpp', 'unknown', undefined],
    ['vllm', '0.11.0', [0, 11, 0]],
    ['vllm', 'v0.11.2rc1', [0, 11, 2]],
    ['vllm', '0.6.4.post1', [0, 6, 4]],
    ['vllm', '0.9.0.dev123+g1234', [0, 9, 0]],
    ['vllm', '0.10.1.1', [0, 10, 1]],
    ['vllm', '0.11.1rc2.dev45+g1a2b3c4', [0, 11, 1]],
    ['vllm', '0.6.3.post1', [0, 6, 3]],
    // setuptools_scm's guess in a checkout without release tags: current code, no release named.
    ['vllm', '0.1.dev7557+g977180c', undefined],
    ['vllm', '0.1.dev1+gb22b798.d20241006.cu126', undefined],
    ['vllm', '0.0.0', undefined],
    ['vllm', 'dev', undefined],
    ['vllm', '0.1.2', [0, 1, 2]],
    ['ollama', '0.0.0', undefined],
    ['ollama', '0.14.0-rc2', [0, 14, 0]],
    ['ollama', '0.13', [0, 13, 0]],
    ['ollama', 'dev', undefined],
  ];
  for (const [kind, version, want] of rows) assert.deepEqual(versionNumbers(kind, version), want, `${kind} ${version}`);
});

test('predates: only a known version below a recorded first excludes, with the reason', () => {
  const rows: readonly (readonly [string, NodeKind, string | undefined, InferenceEndpoint, string | undefined])[] = [
    [
      'a llama-server before Anthropic Messages',
      'llamacpp',
      'b7000-abcdef0',
      '/v1/messages',
      'its version b7000-abcdef0 predates POST /v1/messages (llamacpp serves it from b7187)',
    ],
    [
      '…and before count_tokens',
      'llamacpp',
      'b7000-abcdef0',
      '/v1/messages/count_tokens',
      'its version b7000-abcdef0 predates POST /v1/messages/count_tokens (llamacpp serves it from b7187)',
    ],
    ['the first build that has it', 'llamacpp', 'b7187-0000000', '/v1/messages', undefined],
    ['a later build', 'llamacpp', 'b10587-3f545bec', '/v1/audio/transcriptions', undefined],
    [
      'a build before transcriptions',
      'llamacpp',
      'b8000-1234567',
      '/v1/audio/transcriptions',
      'its version b8000-1234567 predates POST /v1/audio/transcriptions (llamacpp serves it from b8784)',
    ],
    [
      'a build before /v1/responses',
      'llamacpp',
      'b7500-1',
      '/v1/responses',
      'its version b7500-1 predates POST /v1/responses (llamacpp serves it from b7793)',
    ],
    ['an endpoint with no recorded first is never judged', 'llamacpp', 'b100-1', '/v1/chat/completions', undefined],
    ['an unreadable version is never judged', 'llamacpp', 'local-build', '/v1/messages', undefined],
    ['no version stated: never judged', 'llamacpp', undefined, '/v1/messages', undefined],
    [
      'an Ollama before 0.14',
      'ollama',
      '0.12.3',
      '/v1/messages',
      'its version 0.12.3 predates POST /v1/messages (ollama serves it from 0.14.0)',
    ],
    ['an Ollama 0.14 release candidate counts as 0.14', 'ollama', '0.14.0-rc1', '/v1/messages', undefined],
    ['an Ollama 0.14', 'ollama', '0.14.0', '/v1/messages', undefined],
    [
      'a vLLM before `vllm serve` had Anthropic Messages',
      'vllm',
      '0.11.0',
      '/v1/messages',
      'its version 0.11.0 predates POST /v1/messages (vllm serves it from 0.11.1)',
    ],
    [
      '…its release candidates too',
      'vllm',
      '0.11.0rc2',
      '/v1/messages',
      'its version 0.11.0rc2 predates POST /v1/messages (vllm serves it from 0.11.1)',
    ],
    [
      'an older vLLM',
      'vllm',
      '0.6.3.post1',
      '/v1/messages',
      'its version 0.6.3.post1 predates POST /v1/messages (vllm serves it from 0.11.1)',
    ],
    ['the first vLLM that has it', 'vllm', '0.11.1', '/v1/messages', undefined],
    ['its release candidate counts as it', 'vllm', '0.11.1rc1', '/v1/messages', undefined],
    ['a later vLLM', 'vllm', '0.26.0', '/v1/messages', undefined],
    ['a vLLM built from a checkout without tags is never judged', 'vllm', '0.1.dev7557+g977180c', '/v1/messages', undefined],
    ['vLLM count_tokens: no first recorded, never judged', 'vllm', '0.6.3', '/v1/messages/count_tokens', undefined],
    ['vLLM rerank: no first recorded, never judged', 'vllm', '0.1.2', '/v1/rerank', undefined],
    ['SGLang: no version read, no first recorded', 'sglang', '0.4.0', '/v1/messages', undefined],
    ['an auto node not told apart: never judged', 'auto', 'b1-1', '/v1/messages', undefined],
  ];
  for (const [name, kind, version, endpoint, want] of rows) assert.equal(predatesEndpoint(kind, version, endpoint), want, name);
});

test('every recorded first is readable by its own kind', () => {
  const kinds: readonly NodeKind[] = ['llamacpp', 'vllm', 'sglang', 'ollama', 'openai', 'auto'];
  for (const kind of kinds) {
    for (const endpoint of servedEndpoints({ kind, endpoints: undefined })) {
      const first = firstVersion(kind, endpoint);
      if (first !== undefined) assert.notEqual(versionNumbers(kind, first), undefined, `${kind} ${endpoint} ${first}`);
    }
  }
});

test('where each kind states its version, read from its answer', () => {
  assert.equal(versionDialect('vllm')?.path, '/version');
  assert.equal(versionDialect('vllm')?.parse({ version: '0.11.0' }), '0.11.0');
  assert.equal(versionDialect('ollama')?.path, '/api/version');
  assert.equal(versionDialect('ollama')?.parse({ version: '0.14.0' }), '0.14.0');
  assert.equal(versionDialect('llamacpp')?.parse({ role: 'router', build_info: 'b10587-3f545bec' }), 'b10587-3f545bec');
  assert.equal(versionDialect('llamacpp')?.parse({ build_info: 7 }), undefined);
  assert.equal(versionDialect('vllm')?.parse('0.11.0'), undefined);
  assert.equal(versionDialect('openai'), undefined);
});

test('an auto node found to be Ollama serves Ollama’s native API; a configured kind is never replaced', () => {
  assert.equal(kindOfNode('auto', { detected: 'ollama' }), 'ollama');
  assert.equal(kindOfNode('auto', {}), 'auto');
  assert.equal(kindOfNode('vllm', { detected: 'ollama' }), 'vllm');
  assert.ok(servedEndpoints({ kind: 'auto', endpoints: undefined }, { detected: 'ollama' }).includes('/api/chat'));
  assert.ok(!servedEndpoints({ kind: 'auto', endpoints: undefined }).includes('/api/chat'));
  assert.ok(servedEndpoints({ kind: 'llamacpp', endpoints: undefined }).includes('/v1/reranking'));
  assert.ok(servedEndpoints({ kind: 'llamacpp', endpoints: undefined }).includes('/reranking'));
});

test('the facts read from a probe’s answers: a configured kind’s version, an auto node’s kind and then its version', async () => {
  const { factsPaths, readFacts } = await import('#src/kinds/index.ts');
  const ok = (body: unknown) => ({ ok: true as const, status: 200, body });
  const missing = { ok: false as const, status: 404, error: 'HTTP 404' };
  assert.deepEqual(factsPaths('vllm'), ['/version']);
  assert.deepEqual(factsPaths('openai'), []);
  assert.ok(
    factsPaths('auto').includes('/version') &&
      factsPaths('auto').includes('/api/version') &&
      factsPaths('auto').includes('/props'),
  );
  const ollama = new Map<string, ReturnType<typeof ok> | typeof missing>([
    ['/api/version', ok({ version: '0.14.0' })],
    ['/props', missing],
    ['/version', missing],
    ['/v1/models', ok({ object: 'list', data: [] })],
  ]);
  assert.deepEqual(
    readFacts('auto', (p) => ollama.get(p)),
    { detected: 'ollama', evidence: 'GET /api/version answers {"version": …}', version: '0.14.0' },
  );
  assert.deepEqual(
    readFacts('vllm', (p) => (p === '/version' ? ok({ version: '0.11.0' }) : undefined)),
    { version: '0.11.0' },
  );
  assert.deepEqual(
    readFacts('vllm', () => missing),
    {},
  );
  assert.deepEqual(
    readFacts('auto', () => missing),
    {},
    'not told apart: nothing',
  );
});
