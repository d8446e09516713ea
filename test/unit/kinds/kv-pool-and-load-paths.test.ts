import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LLAMA_KV_POOL, serverKinds, type KvFigures, type ServerRole } from '#src/kinds/index.ts';

const ROLES: readonly ServerRole[] = ['unknown', 'single', 'router'];

test('a llama-server pool: unified KV is one n_ctx shared by the slots, per-slot KV n_ctx each', () => {
  const cases: readonly [KvFigures, number | undefined, number][] = [
    [{ nCtx: 4096, slots: 4, mode: 'unified' }, 4096, 1024],
    [{ nCtx: 4096, slots: undefined, mode: 'unified' }, 4096, 4096],
    [{ nCtx: 4096, slots: 0, mode: 'unified' }, 4096, 4096],
    [{ nCtx: 1000, slots: 3, mode: 'unified' }, 1000, 333],
    [{ nCtx: 512, slots: 2, mode: 'per-slot' }, 1024, 512],
    [{ nCtx: 512, slots: undefined, mode: 'per-slot' }, undefined, 512],
  ];
  for (const [figures, budget, guaranteed] of cases) {
    assert.equal(LLAMA_KV_POOL.budget(figures), budget, JSON.stringify(figures));
    assert.equal(LLAMA_KV_POOL.guaranteedCtx(figures), guaranteed, JSON.stringify(figures));
  }
});

test('every kind budgets a pool exactly where the node is a llama-server: llama.cpp always, any other once /props said so', () => {
  for (const kind of serverKinds()) {
    for (const role of ROLES) {
      const expected = kind.name === 'llamacpp' || role !== 'unknown';
      assert.equal(kind.kvPool(role) === LLAMA_KV_POOL, expected, `${kind.name} ${role}`);
      if (!expected) assert.equal(kind.kvPool(role), undefined, `${kind.name} ${role}`);
    }
  }
});

test('the load GETs: none for a kind without gauges, per loaded model on a router, none for llama.cpp of unknown role', () => {
  const loaded = ['a', 'b c'];
  for (const kind of serverKinds()) {
    for (const role of ROLES) {
      const paths = kind.loadPaths(role, loaded);
      const expected =
        kind.load === undefined || (kind.name === 'llamacpp' && role === 'unknown')
          ? undefined
          : role === 'router'
            ? ['/metrics?model=a&autoload=false', '/metrics?model=b%20c&autoload=false']
            : ['/metrics'];
      assert.deepEqual(paths, expected, `${kind.name} ${role}`);
    }
  }
  assert.deepEqual(
    serverKinds()
      .find((k) => k.name === 'llamacpp')
      ?.loadPaths('router', []),
    [],
    'a router with nothing loaded runs nothing',
  );
});
