// serves-model and a router's statuses: a listed model whose child failed (with its exit code) or
// that is still downloading is excluded with why; sleeping and loading pass (a request wakes or
// waits for it), and an unknown status passes as a model the router would load.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DiscoveredModel } from '#src/discovery/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { servesModel } from '#src/routing/filters/index.ts';
import { model, node, request, snapshotOf } from '#test/fixtures/builders.ts';

function routerWith(entry: DiscoveredModel): NodeView {
  const base = node('router', { models: ['other'], kind: 'llamacpp' });
  const models = [...base.discovery.models, entry];
  return { ...base, discovery: { ...base.discovery, models }, modelsById: new Map(models.map((m) => [m.id, m])) };
}

const ROWS: readonly (readonly [string, Partial<DiscoveredModel>, { code: string; detail: RegExp } | undefined])[] = [
  [
    'failed, exit code 1',
    { loaded: false, status: 'failed', exitCode: 1 },
    { code: 'model_failed', detail: /exited with code 1 \(failed\)/ },
  ],
  [
    'downloading at 40%',
    { loaded: false, status: 'downloading', progress: { kind: 'download', fraction: 0.4 } },
    { code: 'downloading', detail: /^downloading \(40%\)/ },
  ],
  ['downloaded', { loaded: false, status: 'downloaded' }, { code: 'downloading', detail: /^downloaded; routable once/ }],
  ['sleeping', { loaded: false, status: 'sleeping' }, undefined],
  ['loading', { loaded: false, status: 'loading' }, undefined],
  ['unloaded', { loaded: false, status: 'unloaded' }, undefined],
  ['an unknown status', { loaded: false, status: 'hibernating' }, undefined],
  ['loaded', { loaded: true, status: 'loaded' }, undefined],
];

for (const [name, entry, wanted] of ROWS) {
  test(`serves-model: a router model ${name}`, () => {
    const view = routerWith(model('m', entry));
    const verdict = servesModel.apply(request('m'), [view], snapshotOf([view]));
    if (wanted === undefined) {
      assert.deepEqual(verdict.excluded, []);
      return;
    }
    assert.equal(verdict.excluded.length, 1);
    assert.equal(verdict.excluded[0]?.code, wanted.code);
    assert.match(verdict.excluded[0]?.detail ?? '', wanted.detail);
  });
}
