import { test } from 'node:test';
import assert from 'node:assert/strict';
import { documentedRow } from '#src/core/site-rows.ts';
import { sitesDocument as sitesView } from '#src/mesh/sites-document.ts';

test('/admin/sites without [mesh]: mesh false and no sites', () => {
  assert.deepEqual(sitesView(undefined), { mesh: false, sites: [] });
});

test('/admin/sites lists this site and every pinned remote site, sorted by id', () => {
  const row = (id: string) => ({
    id,
    fresh: false,
    url: undefined,
    revision: undefined,
    age_ms: undefined,
    models: [],
    load: undefined,
    load_score: 0,
    last_rejection: undefined,
    last_trust_failure: undefined,
  });
  const own = { id: 'a', url: 'http://127.0.0.1:1', revision: 7, models: [{ id: 'm' }], published_at: undefined, peers: 2 };
  const doc = sitesView({ own: () => own, remote: () => [row('c'), row('b')] });
  assert.equal(doc.mesh, true);
  assert.deepEqual(doc.site, own);
  assert.deepEqual(
    doc.sites.map((s) => s.id),
    ['b', 'c'],
  );
});

test('/admin/sites shows only the documented fields of what a remote record wrote (table)', () => {
  const base = {
    id: 'b',
    fresh: true,
    url: 'http://127.0.0.1:2',
    revision: 1,
    age_ms: 5,
    load_score: 0.5,
    last_rejection: undefined,
    last_trust_failure: undefined,
  };
  const table: { name: string; models: unknown[]; load: unknown; wantModels: unknown[]; wantLoad: unknown }[] = [
    {
      name: 'documented fields only: unchanged',
      models: [{ id: 'm', ctx: 8, on_demand: false }],
      load: { in_flight: 1, queued: 0, slots: 2 },
      wantModels: [{ id: 'm', ctx: 8, on_demand: false }],
      wantLoad: { in_flight: 1, queued: 0, slots: 2 },
    },
    {
      name: 'absent optional fields stay absent',
      models: [{ id: 'm' }],
      load: undefined,
      wantModels: [{ id: 'm' }],
      wantLoad: undefined,
    },
    {
      name: 'extra fields are dropped',
      models: [{ id: 'm', html: '<b>', ctx: 8 }],
      load: { in_flight: 1, queued: 0, slots: 2, note: 'x' },
      wantModels: [{ id: 'm', ctx: 8 }],
      wantLoad: { in_flight: 1, queued: 0, slots: 2 },
    },
  ];
  for (const row of table) {
    const remote = { ...base, models: row.models, load: row.load } as Parameters<typeof documentedRow>[0];
    const doc = sitesView({
      own: () => ({ id: 'a', url: 'http://127.0.0.1:1', revision: 1, models: [], published_at: undefined, peers: 0 }),
      remote: () => [remote],
    });
    assert.deepEqual(doc.sites[0], { ...base, models: row.wantModels, load: row.wantLoad }, row.name);
    assert.deepEqual(documentedRow(remote), doc.sites[0], row.name);
  }
});
