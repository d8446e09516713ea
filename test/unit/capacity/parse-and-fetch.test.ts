import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LeaseTable, admits, parseLlamaProps, parseOllamaPs, rememberContexts, routerPropsPaths } from '#src/capacity/index.ts';
import { model } from '#test/fixtures/builders.ts';

test('plain /props of a router is recognised and its n_ctx 0 is not taken as a context', () => {
  const body = { role: 'router', max_instances: 4, models_autoload: true, default_generation_settings: { params: null, n_ctx: 0 } };
  assert.deepEqual(parseLlamaProps(body), { role: 'router', context: undefined });
});

test('a single server /props gives the per-slot n_ctx and total_slots, old and new layouts alike', () => {
  const current = { default_generation_settings: { params: {}, n_ctx: 512 }, total_slots: 2, model_alias: 'x' };
  assert.deepEqual(parseLlamaProps(current), { role: 'single', context: { nCtx: 512, slots: 2 } });
  const older = { default_generation_settings: { id: 0, n_ctx: 4096, is_processing: false }, total_slots: 1 };
  assert.deepEqual(parseLlamaProps(older), { role: 'single', context: { nCtx: 4096, slots: 1 } });
  for (const bad of [null, [], 'x', { default_generation_settings: { n_ctx: 'big' } }, {}]) {
    assert.equal(parseLlamaProps(bad), undefined, JSON.stringify(bad));
  }
});

test('Ollama /api/ps gives the loaded models and their runtime context_length', () => {
  const body = { models: [{ name: 'llama3.2:latest', model: 'llama3.2:latest', context_length: 4096 }, { name: 'x:latest' }, 7] };
  assert.deepEqual(parseOllamaPs(body), { loadedIds: ['llama3.2:latest', 'x:latest'], models: { 'llama3.2:latest': { nCtx: 4096, slots: undefined } } });
  assert.equal(parseOllamaPs({ error: 'nope' }), undefined);
});

test('a router is asked /props only for loaded models, encoded, with autoload=false', () => {
  const paths = routerPropsPaths([
    model('org/gemma:Q4 K', { loaded: true }),
    model('b', { loaded: false, status: 'unloaded' }),
    model('c', { loaded: false, status: 'sleeping' }),
  ]);
  assert.deepEqual(paths, ['/props?model=org%2Fgemma%3AQ4%20K&autoload=false']);
});

test('known contexts keep the last figure per model and change only when a figure does', () => {
  const first = rememberContexts({}, { a: { nCtx: 1, slots: 1 } });
  assert.equal(rememberContexts(first, { a: { nCtx: 1, slots: 1 } }), first);
  assert.deepEqual(rememberContexts(first, { b: { nCtx: 2, slots: undefined } }), { a: { nCtx: 1, slots: 1 }, b: { nCtx: 2, slots: undefined } });
});

test('a slot and budget check admits one idle request and refuses past slots or budget', () => {
  const cases: [Parameters<typeof admits>, string | undefined][] = [
    [[{ requests: 0, tokens: 0 }, { slots: 1, budget: 100 }, 500], undefined],
    [[{ requests: 1, tokens: 10 }, { slots: 1, budget: undefined }, 5], 'no_slot'],
    [[{ requests: 1, tokens: 60 }, { slots: 4, budget: 100 }, 50], 'no_budget'],
    [[{ requests: 1, tokens: 50 }, { slots: 4, budget: 100 }, 50], undefined],
    [[{ requests: 9, tokens: 9_000 }, { slots: undefined, budget: undefined }, 50], undefined],
  ];
  for (const [args, expected] of cases) assert.equal(admits(...args), expected, JSON.stringify(args));
});

test('usage is counted until released, exactly once', () => {
  const table = new LeaseTable();
  const a = table.acquire('n', 'm', 100);
  const b = table.acquire('n', 'm', 50);
  assert.deepEqual(table.usage('n', 'm'), { requests: 2, tokens: 150 });
  a.release();
  a.release();
  assert.deepEqual(table.usage('n', 'm'), { requests: 1, tokens: 50 });
  b.release();
  assert.equal(table.totalRequests(), 0);
  assert.deepEqual(table.entries(), []);
});
