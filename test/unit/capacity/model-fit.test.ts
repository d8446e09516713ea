import { test } from 'node:test';
import assert from 'node:assert/strict';
import { budgetFor, ctxFor, guaranteedCtx, lastKnownCtx, residencyOf, slotsFor } from '#src/capacity/index.ts';
import { node } from '#test/fixtures/builders.ts';

test('loaded means loaded: only a router entry with status loaded (or none) counts', () => {
  const router = node('r', { models: ['a'], onDemand: { b: 'unloaded', c: 'sleeping', d: 'loading' } });
  assert.deepEqual(residencyOf(router, 'a'), { state: 'loaded' });
  assert.deepEqual(residencyOf(router, 'b'), { state: 'on_demand', status: 'unloaded' });
  assert.deepEqual(residencyOf(router, 'c'), { state: 'on_demand', status: 'sleeping' });
  assert.deepEqual(residencyOf(router, 'd'), { state: 'on_demand', status: 'loading' });
  assert.deepEqual(residencyOf(router, 'zzz'), { state: 'absent' });
});

test('an Ollama model counts as loaded only while /api/ps lists it', () => {
  const ollama = node('o', { models: ['x:latest', 'y:latest'], kind: 'ollama', capacity: { loadedIds: ['y:latest'] } });
  assert.equal(residencyOf(ollama, 'x:latest').state, 'on_demand');
  assert.equal(residencyOf(ollama, 'y:latest').state, 'loaded');
});

test('a node whose listing is not known yet is presumed to have the model', () => {
  assert.equal(residencyOf(node('fresh'), 'anything').state, 'loaded');
});

test('the per-request context prefers the per-model figure, then the list, then a single host', () => {
  const perModel = node('r', { models: ['a'], capacity: { role: 'router', models: { a: { nCtx: 4096, slots: 2 } } } });
  assert.equal(ctxFor(perModel, 'a'), 4096);
  const single = node('s', { models: ['m'], capacity: { role: 'single', host: { nCtx: 8192, slots: 4 } } });
  assert.equal(ctxFor(single, 'm'), 8192);
  assert.equal(slotsFor(single, 'm'), 4);
  const router = node('r2', { models: ['a'], capacity: { role: 'router' } });
  assert.equal(ctxFor(router, 'a'), 0, 'a router never lends its own n_ctx (0) to a model');
});

test('llama.cpp reports n_ctx per slot already: it is never divided again', () => {
  const single = node('s', {
    models: ['m'],
    kind: 'llamacpp',
    kv: 'per-slot',
    capacity: { role: 'single', host: { nCtx: 1024, slots: 4 } },
  });
  assert.equal(ctxFor(single, 'm'), 1024);
  assert.equal(guaranteedCtx(single, 'm'), 1024);
});

test('the context budget is n_ctx with unified KV, n_ctx × slots per slot, none for vLLM', () => {
  const unified = node('u', { models: ['m'], kind: 'llamacpp', capacity: { role: 'single', host: { nCtx: 4096, slots: 4 } } });
  assert.equal(budgetFor(unified, 'm'), 4096);
  assert.equal(guaranteedCtx(unified, 'm'), 1024);
  const perSlot = node('p', {
    models: ['m'],
    kind: 'llamacpp',
    kv: 'per-slot',
    capacity: { role: 'single', host: { nCtx: 1024, slots: 4 } },
  });
  assert.equal(budgetFor(perSlot, 'm'), 4096);
  const vllm = node('v', { models: ['m'], kind: 'vllm', capacity: { models: { m: { nCtx: 8192, slots: undefined } } } });
  assert.equal(budgetFor(vllm, 'm'), undefined);
});

test('a model that is not loaded is judged by the last context ever seen for it', () => {
  const router = node('r', {
    onDemand: { b: 'unloaded' },
    capacity: { role: 'router' },
    contexts: { b: { nCtx: 32768, slots: 1 } },
  });
  assert.equal(ctxFor(router, 'b'), 0);
  assert.equal(lastKnownCtx(router, 'b'), 32768);
});

test('a residency without its own status is one shared object, not one per call (issue 42: the request path asks for every node)', () => {
  const a = node('a', { models: ['x'], onDemand: { y: 'unloaded', z: 'sleeping' } });
  const b = node('b', { models: ['x'] });
  assert.equal(residencyOf(a, 'x'), residencyOf(b, 'x'), 'loaded');
  assert.equal(residencyOf(a, 'nope'), residencyOf(b, 'nope'), 'absent');
  assert.equal(residencyOf(a, 'y'), residencyOf(a, 'y'), 'on demand, unloaded');
  assert.ok(Object.isFrozen(residencyOf(a, 'x')), 'shared, so frozen');
  assert.deepEqual(residencyOf(a, 'z'), { state: 'on_demand', status: 'sleeping' });
});
