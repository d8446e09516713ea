// A session another site served goes back there while that site could take the request, else it
// leaves it with why (routing/remote/site-session.ts); the session table holds the site as a target
// kind apart from every node name, and the local session layer says why the site was left.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  sessionSite,
  siteSessionTarget,
  siteSessionVerdict,
  whyNotCandidate,
  type RemoteSiteView,
  type RouteRequest,
  type SiteRequest,
} from '#src/routing/index.ts';
import type { RoutingSnapshot } from '#src/nodes/index.ts';

function site(id: string, over: Partial<RemoteSiteView> = {}): RemoteSiteView {
  return {
    id,
    url: `http://127.0.0.1:1/${id}`,
    fresh: true,
    load: 0,
    models: new Map([['m', { ctx: 8192, onDemand: false }]]),
    ...over,
  };
}

const req = (over: Partial<SiteRequest> = {}): SiteRequest => ({
  model: 'm',
  promptTokens: 100,
  maxTokens: 50,
  triedSites: new Set(),
  forwarded: false,
  ...over,
});
const NONE = new Map<string, string>();

test('a session on a site: kept while the site can take it, else left with why', () => {
  const cases: {
    name: string;
    sites: RemoteSiteView[];
    req?: Partial<SiteRequest>;
    down?: Map<string, string>;
    want: string;
  }[] = [
    { name: 'fresh and serving the model', sites: [site('b'), site('c', { load: 5 })], want: 'kept c' },
    {
      name: 'stale',
      sites: [site('c', { fresh: false, remembered: true })],
      want: 'left stale (no fresh record within the freshness window; its last record listed this model)',
    },
    { name: 'no longer lists the model', sites: [site('c', { models: new Map() })], want: 'left no longer serves the model' },
    {
      name: 'too small now',
      sites: [site('c', { models: new Map([['m', { ctx: 100, onDemand: false }]]) })],
      want: 'left too small (ctx 100 < 150 needed)',
    },
    {
      name: 'unreachable',
      sites: [site('c')],
      down: new Map([['c', 'connect ECONNREFUSED']]),
      want: 'left unreachable (connect ECONNREFUSED)',
    },
    {
      name: 'out of the tenant scope',
      sites: [site('c')],
      req: { scope: [] },
      want: "left not in tenant scope (the tenant's requests stay on this site (its sites = []))",
    },
    {
      name: 'a forward (one hop)',
      sites: [site('c')],
      req: { forwarded: true },
      want: 'left forwarded (the request was forwarded here: local nodes only)',
    },
    { name: 'unpinned', sites: [site('b')], want: 'left no longer a pinned site' },
  ];
  for (const c of cases) {
    const verdict = siteSessionVerdict(req(c.req), 'c', c.sites, c.down ?? NONE);
    assert.equal(verdict.kind === 'kept' ? `kept ${verdict.site.id}` : `left ${verdict.why}`, c.want, c.name);
  }
});

test('the table holds a site apart from every node name; the session layer says why the site was left', () => {
  assert.equal(sessionSite(siteSessionTarget('c')), 'c');
  // Node names hold no space (NODE_NAME_RULE): no node's name reads as a site.
  for (const node of ['gpu-1', 'site:c', 'site-c', 'a@b:1']) assert.equal(sessionSite(node), undefined, node);
  const snapshot = { nodes: [], now: 0 } as unknown as RoutingSnapshot;
  const route = { model: 'm', triedNodes: new Set<string>() } as unknown as RouteRequest;
  assert.equal(whyNotCandidate('site c', { ...route, sessionSiteLeft: 'stale' }, snapshot), 'stale');
  assert.equal(whyNotCandidate('site c', route, snapshot), 'no such site here');
  assert.equal(whyNotCandidate('gpu-1', route, snapshot), 'left the fleet');
});
