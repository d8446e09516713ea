import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadedIdsOf } from '#src/capacity/index.ts';
import { parseLlamaProps, routerPropsPath, serverKind } from '#src/kinds/index.ts';
import { model } from '#test/fixtures/builders.ts';

test('plain /props of a router is recognised and its n_ctx 0 is not taken as a context', () => {
  const body = {
    role: 'router',
    max_instances: 4,
    models_autoload: true,
    default_generation_settings: { params: null, n_ctx: 0 },
  };
  assert.deepEqual(parseLlamaProps(body), { role: 'router', context: undefined, limits: { maxInstances: 4, autoload: true } });
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

test('a router is asked /props only for loaded models, encoded, with autoload=false', () => {
  const paths = loadedIdsOf([
    model('org/gemma:Q4 K', { loaded: true }),
    model('b', { loaded: false, status: 'unloaded' }),
    model('c', { loaded: false, status: 'sleeping' }),
  ]).map(routerPropsPath);
  assert.deepEqual(paths, ['/props?model=org%2Fgemma%3AQ4%20K&autoload=false']);
  assert.equal(serverKind('llamacpp').capacity?.perModel?.path('org/gemma:Q4 K'), paths[0]);
});

test('the capacity dialect reads /props as a single server or a router, and a per-model answer as figures', () => {
  const capacity = serverKind('llamacpp').capacity;
  assert.equal(capacity?.path, '/props');
  const cases: [unknown, unknown][] = [
    [
      { default_generation_settings: { n_ctx: 512 }, total_slots: 2 },
      { shape: 'single', host: { nCtx: 512, slots: 2 } },
    ],
    [{ role: 'router', default_generation_settings: { n_ctx: 0 } }, { shape: 'router' }],
    [{ default_generation_settings: { n_ctx: 'big' } }, undefined],
  ];
  for (const [body, expected] of cases) assert.deepEqual(capacity?.parse(body), expected, JSON.stringify(body));
  assert.deepEqual(capacity?.perModel?.parse({ default_generation_settings: { n_ctx: 4096 }, total_slots: 4 }), {
    nCtx: 4096,
    slots: 4,
  });
  assert.equal(capacity?.perModel?.parse({ role: 'router' }), undefined);
});

test('its tokenize request carries the model, never autoloads, and its answer is counted', () => {
  const tokenize = serverKind('llamacpp').tokenize;
  assert.deepEqual(tokenize?.request('m', 'hello there'), {
    path: '/tokenize?autoload=false',
    body: { model: 'm', content: 'hello there', add_special: true },
  });
  assert.equal(tokenize?.count({ tokens: [1, 2, 3] }), 3);
  assert.equal(tokenize?.count({ tokens: 'x' }), undefined);
  assert.equal(tokenize?.count(null), undefined);
});

test("a router's max_instances and models_autoload are read from its plain /props", () => {
  const parse = serverKind('llamacpp').capacity?.parse;
  assert.ok(parse !== undefined);
  const cases: [unknown, unknown][] = [
    [
      { role: 'router', max_instances: 1, models_autoload: true },
      { shape: 'router', limits: { maxInstances: 1, autoload: true } },
    ],
    [
      { role: 'router', max_instances: 0, models_autoload: false },
      { shape: 'router', limits: { maxInstances: 0, autoload: false } },
    ],
    [{ role: 'router', max_instances: -1, models_autoload: 'yes' }, { shape: 'router' }],
    [{ role: 'router', max_instances: 2.5 }, { shape: 'router' }],
    [
      { role: 'router', models_autoload: false },
      { shape: 'router', limits: { maxInstances: undefined, autoload: false } },
    ],
  ];
  for (const [body, expected] of cases) assert.deepEqual(parse(body), expected, JSON.stringify(body));
});
