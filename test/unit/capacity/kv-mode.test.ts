import assert from 'node:assert/strict';
import { test } from 'node:test';
import { budgetFor, guaranteedCtx, kvModeFor } from '#src/capacity/index.ts';
import { parseModelList } from '#src/discovery/index.ts';
import { model, node } from '#test/fixtures/builders.ts';

const ROUTER = { role: 'router' as const, host: undefined, loadedIds: undefined, models: { m: { nCtx: 512, slots: 2 } } };

function routerNode(kv: 'auto' | 'unified' | 'per-slot', listedKv: 'unified' | 'per-slot' | undefined) {
  const view = node('r', { kind: 'llamacpp', kv, capacity: ROUTER, models: ['m'] });
  const entry = model('m', listedKv === undefined ? {} : { kv: listedKv });
  return { ...view, modelsById: new Map([['m', entry]]), discovery: { ...view.discovery, models: [entry] } };
}

test('kv = "auto" takes the router args, else unified; a configured mode always wins', () => {
  const cases: [string, 'auto' | 'unified' | 'per-slot', 'unified' | 'per-slot' | undefined, unknown, number, number][] = [
    // what, configured, from args, figure, budget, guaranteed per request
    ['auto, args say per-slot', 'auto', 'per-slot', { mode: 'per-slot', source: 'router args' }, 1024, 512],
    ['auto, args say unified', 'auto', 'unified', { mode: 'unified', source: 'router args' }, 512, 256],
    ['auto, nothing said', 'auto', undefined, { mode: 'unified', source: 'default' }, 512, 256],
    ['configured unified over per-slot args', 'unified', 'per-slot', { mode: 'unified', source: 'config' }, 512, 256],
    ['configured per-slot', 'per-slot', undefined, { mode: 'per-slot', source: 'config' }, 1024, 512],
  ];
  for (const [what, kv, listedKv, figure, budget, guaranteed] of cases) {
    const view = routerNode(kv, listedKv);
    assert.deepEqual(kvModeFor(view, 'm'), figure, what);
    assert.equal(budgetFor(view, 'm'), budget, `${what}: budget`);
    assert.equal(guaranteedCtx(view, 'm'), guaranteed, `${what}: guaranteed`);
  }
});

test('the listing parser reads a router entry`s KV mode from status.args (the b10587 capture)', () => {
  const listing = {
    object: 'list',
    data: [
      { id: 'a', status: { value: 'loaded', args: ['/usr/local/bin/llama-server', '--ctx-size', '1024', '--parallel', '2'] } },
      { id: 'b', status: { value: 'unloaded', args: ['/usr/local/bin/llama-server', '-kvu'] } },
      { id: 'c', status: { value: 'loaded' } },
    ],
  };
  const parsed = parseModelList('llamacpp', listing);
  assert.ok(parsed.ok);
  assert.deepEqual(
    parsed.models.map((m) => [m.id, m.kv]),
    [
      ['a', 'per-slot'],
      ['b', 'unified'],
      ['c', undefined],
    ],
  );
});
