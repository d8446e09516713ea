import assert from 'node:assert/strict';
import { test } from 'node:test';
import { remoteModelList } from '#src/proxy/sites/remote-models.ts';
import { siteTargetUrl } from '#src/mesh/forwarding/index.ts';
import { noNodeAvailable } from '#src/proxy/refusal/refusal-errors.ts';
import type { RemoteSiteView } from '#src/routing/index.ts';

function site(id: string, models: Record<string, { ctx?: number; onDemand?: boolean }>, fresh = true): RemoteSiteView {
  return {
    id,
    url: `http://127.0.0.1:1/${id}`,
    fresh,
    load: 0,
    models: new Map(Object.entries(models).map(([m, v]) => [m, { ctx: v.ctx, onDemand: v.onDemand ?? false }])),
  };
}

test('/v1/models gets one entry per model only fresh remote sites serve, marked with its sites', () => {
  const sites = [
    site('z', { x: { ctx: 8192 }, local: {} }),
    site('a', { x: { ctx: 4096, onDemand: true }, y: { onDemand: true } }),
    site('old', { stale: {} }, false),
    site('self', { mine: {} }),
  ];
  const list = remoteModelList(sites, 'self', [{ id: 'local' }], 60_000);
  assert.deepEqual(
    list.map((m) => [m.id, m.owned_by, m.max_model_len, m.loaded, m.switchyard.sites]),
    [
      ['x', 'switchyard:a', 8192, true, ['a', 'z']],
      ['y', 'switchyard:a', null, false, ['a']],
    ],
  );
  assert.equal(list[0]?.created, 60);
  // A tenant whose sites scope allows only z: a's models and a's name are left out.
  const scoped = remoteModelList(sites, 'self', [{ id: 'local' }], 60_000, (site) => site === 'z');
  assert.deepEqual(
    scoped.map((m) => [m.id, m.owned_by, m.switchyard.sites]),
    [['x', 'switchyard:z', ['z']]],
  );
  assert.deepEqual(
    remoteModelList(sites, 'self', [], 60_000, () => false),
    [],
    'a local-only tenant is shown no remote model',
  );
});

test('a 503 lists the remote sites next to the node counts, and leaves the body alone without a mesh', () => {
  const withSites = noNodeAvailable('m', [], 1, [
    { site: 'a', code: 'stale', detail: 'no record yet' },
    { site: 'b', code: 'missing' },
  ]);
  assert.deepEqual(withSites.details.sites, [
    { site: 'a', reason: 'stale', detail: 'no record yet' },
    { site: 'b', reason: 'missing' },
  ]);
  assert.match(withSites.message, /remote sites: a stale, b missing$/);
  const alone = noNodeAvailable('m', [], 1);
  assert.equal('sites' in alone.details, false);
  assert.doesNotMatch(alone.message, /remote/);
});

test('a forward goes to <site url><endpoint>, path prefix kept; a url that is not http(s) is refused', () => {
  const cases: [string, string | undefined][] = [
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080/v1/chat/completions'],
    ['http://127.0.0.1:8080/', 'http://127.0.0.1:8080/v1/chat/completions'],
    ['https://127.0.0.1/site-a', 'https://127.0.0.1/site-a/v1/chat/completions'],
    ['file:///etc/passwd', undefined],
    ['not a url', undefined],
  ];
  for (const [site, expected] of cases) assert.equal(siteTargetUrl(site, '/v1/chat/completions')?.href, expected, site);
});
