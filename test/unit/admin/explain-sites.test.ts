import assert from 'node:assert/strict';
import { test } from 'node:test';
import { explainRouting } from '#src/admin/explain.ts';
import { createPolicy, defaultFilters, type RemoteSiteView } from '#src/routing/index.ts';
import { node, policyContext, request, snapshotOf } from '#test/fixtures/builders.ts';

const policy = createPolicy('least-in-flight', policyContext());
const policies = {
  explain: policy.explain?.bind(policy) ?? (() => undefined),
  prefixHits: () => ({ promptChars: 0, matchedChars: 0 }),
};

function site(id: string, models: string[], over: Partial<RemoteSiteView> = {}): RemoteSiteView {
  return {
    id,
    url: `http://127.0.0.1:1/${id}`,
    fresh: true,
    load: 0,
    models: new Map(models.map((m) => [m, { ctx: undefined, onDemand: false }])),
    ...over,
  };
}

test('explain lists remote sites with their reasons, and says forward when only a site can take the request', () => {
  const snapshot = snapshotOf([node('n1', { models: ['local'] })]);
  const remote = {
    sites: () => [
      site('a', ['far'], { load: 2 }),
      site('b', ['far'], { load: 1 }),
      site('c', ['far'], { fresh: false }),
      site('d', ['other']),
      site('e', ['far']),
    ],
    unreachable: () => new Map([['e', 'ECONNREFUSED (retry in 2 s)']]),
  };
  const far = explainRouting(request('far'), snapshot, defaultFilters(), policies, remote);
  assert.equal(far.outcome, 'forward');
  assert.equal(far.site_choice, 'b');
  assert.deepEqual(
    far.sites?.map((s) => [s.site, s.verdict, s.reason ?? s.load]),
    [
      ['a', 'eligible', 2],
      ['b', 'eligible', 1],
      ['c', 'excluded', 'stale'],
      ['d', 'excluded', 'missing'],
      ['e', 'excluded', 'unreachable'],
    ],
  );
  const local = explainRouting(request('local'), snapshot, defaultFilters(), policies, remote);
  assert.equal(local.outcome, 'route', 'local nodes first');
  const alone = explainRouting(request('far'), snapshot, defaultFilters(), policies);
  assert.equal(alone.outcome, 'no_node_available');
  assert.equal('sites' in alone, false);
});
