// Ollama's /api/tags and /api/ps answered by the gateway (pure): every Ollama node's models once,
// sorted, in Ollama's shapes; only what is loaded in /api/ps with its runtime context; non-Ollama
// nodes, dead or expired ones, and models out of the tenant's scope left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GO_ZERO_TIME, ollamaPs, ollamaTags } from '#src/proxy/request/ollama-listing.ts';
import { node } from '#test/fixtures/builders.ts';

const NOW = Date.UTC(2026, 11, 2, 2, 0, 0);
const views = [
  node('a', {
    kind: 'ollama',
    models: ['llama3:latest', 'qwen3:8b'],
    capacity: { loadedIds: ['llama3:latest'], models: { 'llama3:latest': { nCtx: 8192, slots: undefined } } },
  }),
  node('b', {
    kind: 'ollama',
    models: ['llama3:latest'],
    capacity: { loadedIds: ['llama3:latest'], models: { 'llama3:latest': { nCtx: 4096, slots: undefined } } },
  }),
  node('vllm', { kind: 'vllm', models: ['served-elsewhere'] }),
  node('dead', { kind: 'ollama', models: ['gone:latest'], health: 'dead' }),
];

test('/api/tags: every Ollama node’s models once, sorted, in Ollama’s shape; other kinds and dead nodes left out', () => {
  const tags = ollamaTags(views, undefined, NOW);
  assert.deepEqual(
    tags.models.map((m) => m.name),
    ['llama3:latest', 'qwen3:8b'],
  );
  assert.deepEqual(tags.models[0], {
    name: 'llama3:latest',
    model: 'llama3:latest',
    modified_at: '2026-12-02T02:00:00.000Z',
    size: 0,
    digest: '',
    details: { parent_model: '', format: '', family: '', families: [], parameter_size: '', quantization_level: '' },
  });
  assert.deepEqual(
    ollamaTags(views, (m) => m.startsWith('qwen'), NOW).models.map((m) => m.name),
    ['qwen3:8b'],
    'the tenant’s scope',
  );
});

test('/api/ps: loaded models only, with the largest runtime context among the nodes that have it loaded', () => {
  const ps = ollamaPs(views, undefined);
  assert.deepEqual(
    ps.models.map((m) => [m.name, m.context_length, m.expires_at]),
    [['llama3:latest', 8192, GO_ZERO_TIME]],
  );
  assert.deepEqual(ollamaPs(views, (m) => m.startsWith('qwen')).models, []);
});
