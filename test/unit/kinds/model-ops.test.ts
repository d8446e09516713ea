// Each kind's model operations: the request shapes, how answers read, and the confirmation rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LLAMACPP_ROUTER_OPS, OLLAMA_OPS, serverKinds } from '#src/kinds/index.ts';

test('only a llama-server router and Ollama load and unload on request', () => {
  const able = serverKinds().flatMap((k) =>
    (['router', 'single', 'unknown'] as const).filter((r) => k.modelOps(r) !== undefined).map((r) => `${k.name}:${r}`),
  );
  assert.deepEqual(able, ['llamacpp:router', 'ollama:router', 'ollama:single', 'ollama:unknown']);
});

test('router: POST /models/load|unload, its real error bodies, the listing confirms', () => {
  assert.deepEqual(LLAMACPP_ROUTER_OPS.request('load', 'm'), { path: '/models/load', body: { model: 'm' } });
  assert.deepEqual(LLAMACPP_ROUTER_OPS.request('unload', 'm'), { path: '/models/unload', body: { model: 'm' } });
  const err = (message: string, type = 'invalid_request_error', code = 400) => ({ error: { code, message, type } });
  assert.deepEqual(LLAMACPP_ROUTER_OPS.answer('load', 200, { success: true }), { kind: 'accepted' });
  assert.deepEqual(LLAMACPP_ROUTER_OPS.answer('load', 400, err('model is already running')), { kind: 'already' });
  assert.deepEqual(LLAMACPP_ROUTER_OPS.answer('unload', 400, err('model is not running')), { kind: 'already' });
  assert.equal(LLAMACPP_ROUTER_OPS.answer('load', 404, err('model is not found', 'not_found_error', 404)).kind, 'refused');
  const listing = (value: string, extra: Record<string, unknown> = {}) => ({
    data: [{ id: 'x', aliases: ['m'], status: { value, ...extra } }],
    object: 'list',
  });
  assert.equal(LLAMACPP_ROUTER_OPS.observe(listing('loaded'), 'm'), 'loaded');
  assert.equal(LLAMACPP_ROUTER_OPS.observe(listing('sleeping'), 'x'), 'loaded');
  assert.equal(LLAMACPP_ROUTER_OPS.observe(listing('loading'), 'x'), 'loading');
  assert.equal(LLAMACPP_ROUTER_OPS.observe(listing('unloaded', { failed: true, exit_code: 1 }), 'x'), 'failed');
  assert.equal(LLAMACPP_ROUTER_OPS.observe(listing('unloaded'), 'x'), 'unloaded');
  assert.equal(LLAMACPP_ROUTER_OPS.observe('garbage', 'x'), undefined);
});

test('Ollama: a prompt-less /api/generate with keep_alive, /api/ps confirms', () => {
  assert.deepEqual(OLLAMA_OPS.request('load', 'q'), { path: '/api/generate', body: { model: 'q', keep_alive: -1 } });
  assert.deepEqual(OLLAMA_OPS.request('unload', 'q'), { path: '/api/generate', body: { model: 'q', keep_alive: 0 } });
  assert.equal(OLLAMA_OPS.answer('load', 404, { error: 'model "q" not found, try pulling it first' }).kind, 'refused');
  assert.equal(OLLAMA_OPS.observe({ models: [{ name: 'q', model: 'q' }] }, 'q'), 'loaded');
  assert.equal(OLLAMA_OPS.observe({ models: [] }, 'q'), 'unloaded');
  assert.equal(OLLAMA_OPS.observe({}, 'q'), undefined);
});
