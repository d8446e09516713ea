import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseOllamaPs, serverKind } from '#src/kinds/index.ts';

test('Ollama /api/ps gives the loaded models and their runtime context_length', () => {
  const body = { models: [{ name: 'llama3.2:latest', model: 'llama3.2:latest', context_length: 4096 }, { name: 'x:latest' }, 7] };
  assert.deepEqual(parseOllamaPs(body), {
    loadedIds: ['llama3.2:latest', 'x:latest'],
    models: { 'llama3.2:latest': { nCtx: 4096, slots: undefined } },
  });
  assert.equal(parseOllamaPs({ error: 'nope' }), undefined);
});

test('its capacity answer lists what is loaded; there is no per-model request', () => {
  const capacity = serverKind('ollama').capacity;
  assert.equal(capacity?.path, '/api/ps');
  assert.deepEqual(capacity?.parse({ models: [{ model: 'a:latest', context_length: 64 }] }), {
    shape: 'loaded',
    loadedIds: ['a:latest'],
    models: { 'a:latest': { nCtx: 64, slots: undefined } },
  });
  assert.equal(capacity?.parse({ models: null }), undefined);
  assert.equal(capacity?.perModel, undefined);
});

test('its listing quirk: "data": null is an empty list; any other body is left as it is', () => {
  const ollama = serverKind('ollama');
  assert.deepEqual(ollama.normalizeListing({ object: 'list', data: null }), { object: 'list', data: [] });
  for (const body of [{ object: 'list', data: [{ id: 'a' }] }, { data: 'x' }, null, [], 'ok']) {
    assert.equal(ollama.normalizeListing(body), body, JSON.stringify(body));
  }
});

test('it is probed on /api/version and has no tokenizer we know', () => {
  assert.deepEqual(serverKind('ollama').healthPaths, ['/api/version']);
  assert.equal(serverKind('ollama').tokenize, undefined);
});
