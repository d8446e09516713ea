import { test } from 'node:test';
import assert from 'node:assert/strict';
import { healthReport, withDegraded } from '#src/admin/health-report.ts';
import { storeDegrades, usageHealthPart, usageStoreReport } from '#src/tenants/index.ts';
import type { StateWriteHealth } from '#src/state/index.ts';
import { fleetModels, fleetStatus, healthHttpStatus } from '#src/proxy/index.ts';
import type { HealthState } from '#src/nodes/index.ts';
import { NOW, node } from '#test/fixtures/builders.ts';

test('/health counts healthy nodes and nodes whose model listing is known or known empty', () => {
  const report = healthReport(
    [
      node('a', { models: ['x'] }),
      node('b', { models: [] }),
      node('c', { health: 'dead' }),
      node('d', { phase: 'expired', models: ['x'] }),
    ],
    NOW + 5_000,
  );
  assert.equal(report.status, 'ok');
  assert.equal(report.nodes, 4);
  assert.equal(report.healthy, 3);
  assert.equal(report.models_ok, 2);
  assert.deepEqual(report.details[0]?.models, { state: 'known', names: ['x'], age_seconds: 5, fails: 0, last_error: null });
});

test('/health says down when no node can take traffic, degraded when only degraded ones can', () => {
  assert.equal(healthReport([node('a', { health: 'dead' })], NOW).status, 'down');
  assert.equal(healthReport([node('a', { health: 'degraded' }), node('b', { health: 'dead' })], NOW).status, 'degraded');
});

test('the status anyone may see: ok while a node can take traffic, 503 only when down', () => {
  const table: [HealthState['status'][], string, number][] = [
    [['healthy', 'dead'], 'ok', 200],
    [['unknown'], 'ok', 200],
    [['degraded', 'dead'], 'degraded', 200],
    [['dead', 'asleep'], 'down', 503],
    [[], 'down', 503],
  ];
  for (const [states, status, http] of table) {
    const views = states.map((health, i) => node(`n${i}`, { health }));
    assert.equal(fleetStatus(views), status, states.join());
    assert.equal(healthHttpStatus(fleetStatus(views)), http, states.join());
  }
});

test('the fleet model list is the union of configured and discovered models, with serving nodes', () => {
  const list = fleetModels(
    [
      node('a', { models: ['x', 'y'] }),
      node('b', { models: ['y'], health: 'dead' }),
      node('c', { phase: 'expired', models: ['z'] }),
    ],
    [{ name: 'w', group: undefined, aliases: [], policy: undefined }],
    NOW,
  );
  assert.deepEqual(
    list.data.map((m) => [m.id, m.nodes]),
    [
      ['w', []],
      ['x', ['a']],
      ['y', ['a']],
    ],
  );
  assert.equal(list.data[0]?.object, 'model');
});

test('the state store in /health: a failing one makes an ok fleet degraded (not down, still 200) and is shown; none leaves the report as it is', () => {
  const writes = (status: 'ok' | 'failing'): StateWriteHealth => ({
    file: '/var/lib/switchyard/switchyard.sqlite',
    status,
    lastWriteSeq: 4,
    lastWriteAt: '2026-12-02T10:00:00.000Z',
    failingSince: status === 'failing' ? '2026-12-02T10:00:10.000Z' : null,
    reason: status === 'failing' ? 'SQLITE_FULL (disk full): database or disk is full' : null,
    failures: status === 'failing' ? 3 : 0,
    stale: null,
    markProblem: null,
  });
  const none = { rows: 0, requests: 0, tokens: 0 };
  const table: [HealthState['status'], 'ok' | 'failing', { rows: number; requests: number; tokens: number }, string][] = [
    ['healthy', 'ok', none, 'ok'],
    ['healthy', 'failing', { rows: 2, requests: 5, tokens: 300 }, 'degraded'],
    ['healthy', 'ok', { rows: 1, requests: 1, tokens: 60 }, 'degraded'],
    ['degraded', 'failing', none, 'degraded'],
    ['dead', 'failing', none, 'down'],
  ];
  for (const [nodeHealth, store, unsaved, status] of table) {
    const state = usageStoreReport(writes(store), unsaved, 'advice');
    // The tenants feature degrades /health by its store (storeDegrades) and lays its part beside the fleet's.
    const report = withDegraded(healthReport([node('a', { health: nodeHealth })], NOW), storeDegrades(state));
    assert.equal(report.status, status, `${nodeHealth} + ${store} ${JSON.stringify(unsaved)}`);
    assert.equal(usageHealthPart(state)?.state, state);
  }
  const failing = usageStoreReport(writes('failing'), { rows: 2, requests: 5, tokens: 300 }, 'advice');
  assert.equal(failing.reason, 'SQLITE_FULL (disk full): database or disk is full');
  assert.deepEqual(failing.unsaved, { rows: 2, requests: 5, tokens: 300 });
  const plain = healthReport([node('a')], NOW);
  assert.deepEqual(withDegraded(plain, storeDegrades(undefined)), plain);
  assert.equal(usageHealthPart(undefined), undefined);
});
