import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sitesView } from '#src/admin/sites-view.ts';

test('/admin/sites without [mesh]: mesh false and no sites', () => {
  assert.deepEqual(sitesView(undefined), { mesh: false, sites: [] });
});

test('/admin/sites lists this site and every pinned remote site, sorted by id', () => {
  const row = (id: string) => ({ id, fresh: false, url: undefined, revision: undefined, age_ms: undefined, models: [], load: undefined, load_score: 0, last_rejection: undefined });
  const own = { id: 'a', url: 'http://127.0.0.1:1', revision: 7, models: [{ id: 'm' }], published_at: undefined, peers: 2 };
  const doc = sitesView({ own: () => own, remote: () => [row('c'), row('b')] });
  assert.equal(doc.mesh, true);
  assert.deepEqual(doc.site, own);
  assert.deepEqual(doc.sites.map((s) => s.id), ['b', 'c']);
});
