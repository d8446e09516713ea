import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  chooseSite,
  inSiteScope,
  knownRemoteModels,
  SiteReachability,
  markFailed,
  markReached,
  unreachableAt,
  type RemoteSiteView,
  type SiteRequest,
} from '#src/routing/index.ts';

function site(
  id: string,
  over: Omit<Partial<RemoteSiteView>, 'models'> & { models?: Record<string, { ctx?: number; onDemand?: boolean }> } = {},
): RemoteSiteView {
  const models = new Map(
    Object.entries(over.models ?? { m: {} }).map(([k, v]) => [k, { ctx: v.ctx, onDemand: v.onDemand ?? false }]),
  );
  return { id, url: `http://127.0.0.1:1/${id}`, fresh: true, load: 0, ...over, models };
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

test('each site is excluded with its reason, and the eligible one is chosen', () => {
  const cases: {
    name: string;
    sites: RemoteSiteView[];
    req?: Partial<SiteRequest>;
    down?: Map<string, string>;
    chosen: string | undefined;
    excluded: Record<string, string>;
  }[] = [
    { name: 'fresh and listing the model', sites: [site('a')], chosen: 'a', excluded: {} },
    { name: 'stale', sites: [site('a', { fresh: false }), site('b')], chosen: 'b', excluded: { a: 'stale' } },
    {
      name: 'no record yet',
      sites: [site('a', { url: undefined, fresh: false, models: {} })],
      chosen: undefined,
      excluded: { a: 'stale' },
    },
    { name: 'model missing', sites: [site('a', { models: { other: {} } })], chosen: undefined, excluded: { a: 'missing' } },
    {
      name: 'ctx too small for prompt + max_tokens',
      sites: [site('a', { models: { m: { ctx: 149 } } }), site('b', { models: { m: { ctx: 150 } } })],
      chosen: 'b',
      excluded: { a: 'too_small' },
    },
    {
      name: 'unknown ctx is never too small',
      sites: [site('a', { models: { m: {} } })],
      req: { promptTokens: 1e6 },
      chosen: 'a',
      excluded: {},
    },
    {
      name: 'unreachable',
      sites: [site('a'), site('b')],
      down: new Map([['a', 'ECONNREFUSED']]),
      chosen: 'b',
      excluded: { a: 'unreachable' },
    },
    {
      name: 'already tried',
      sites: [site('a'), site('b')],
      req: { triedSites: new Set(['a']) },
      chosen: 'b',
      excluded: { a: 'already_tried' },
    },
    {
      name: 'forwarded requests never leave again',
      sites: [site('a'), site('b', { fresh: false })],
      req: { forwarded: true },
      chosen: undefined,
      excluded: { a: 'forwarded', b: 'forwarded' },
    },
    {
      name: 'lowest load wins',
      sites: [site('a', { load: 0.9 }), site('b', { load: 0.2 }), site('c', { load: 0.5 })],
      chosen: 'b',
      excluded: {},
    },
    {
      name: 'on-demand ranks after ready even when less loaded',
      sites: [site('a', { load: 0, models: { m: { onDemand: true } } }), site('b', { load: 3 })],
      chosen: 'b',
      excluded: {},
    },
    {
      name: 'on-demand is still eligible alone',
      sites: [site('a', { models: { m: { onDemand: true } } })],
      chosen: 'a',
      excluded: {},
    },
    {
      name: 'stale is judged before missing',
      sites: [site('a', { fresh: false, models: {} })],
      chosen: undefined,
      excluded: { a: 'stale' },
    },
  ];
  for (const c of cases) {
    const choice = chooseSite(req(c.req), c.sites, c.down ?? NONE, 0);
    assert.equal(choice.chosen?.id, c.chosen, c.name);
    assert.deepEqual(Object.fromEntries(choice.excluded.map((e) => [e.site, e.code])), c.excluded, c.name);
  }
});

test('a too-small exclusion says the sizes', () => {
  const choice = chooseSite(req(), [site('a', { models: { m: { ctx: 100 } } })], NONE, 0);
  assert.equal(choice.excluded[0]?.detail, 'ctx 100 < 150 needed');
});

test('ties rotate with the injected turn, whatever order the sites come in', () => {
  const sites = [site('c'), site('a'), site('b'), site('d', { load: 1 })];
  const picks = [0, 1, 2, 3, 4, 5].map((turn) => chooseSite(req(), sites, NONE, turn).chosen?.id);
  assert.deepEqual(picks, ['a', 'b', 'c', 'a', 'b', 'c']);
  assert.equal(chooseSite(req(), sites, NONE, 0).alternatives, 3);
});

test('fresh sites, and stale ones still remembered, keep their models from the 404 rule', () => {
  const models = knownRemoteModels([
    site('a', { models: { x: {}, y: {} } }),
    site('b', { fresh: false, models: { z: {} } }),
    site('c', { fresh: false, remembered: true, models: { w: {} } }),
  ]);
  assert.deepEqual([...models].sort(), ['w', 'x', 'y']);
});

test('a stale site that listed the model says so in its exclusion', () => {
  const choice = chooseSite(req(), [site('b', { fresh: false, remembered: true }), site('c', { fresh: false })], NONE, 0);
  assert.deepEqual(
    choice.excluded.map((e) => [e.site, e.code, e.detail]),
    [
      ['b', 'stale', 'no fresh record within the freshness window; its last record listed this model'],
      ['c', 'stale', 'no fresh record within the freshness window'],
    ],
  );
});

test('a failure before the first byte backs the site off, doubling to the cap; an answer clears it', () => {
  const policy = { initialMs: 2_000, maxMs: 30_000 };
  let state = markFailed(new Map(), 'a', 0, 'ECONNREFUSED', policy);
  assert.deepEqual([...unreachableAt(state, 1_999).keys()], ['a']);
  assert.deepEqual([...unreachableAt(state, 2_000).keys()], []);
  const backoffs: number[] = [];
  for (let i = 0; i < 6; i++) {
    state = markFailed(state, 'a', 10_000, 'timeout', policy);
    backoffs.push(state.get('a')?.backoffMs ?? 0);
  }
  assert.deepEqual(backoffs, [4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  assert.match(unreachableAt(state, 10_000).get('a') ?? '', /^timeout \(retry in 30 s\)$/);
  state = markReached(state, 'a');
  assert.equal(state.size, 0);
  assert.equal(markFailed(state, 'a', 0, 'x', policy).get('a')?.backoffMs, 2_000);
});

test('the holder reports transitions only: down once, back up once', () => {
  let now = 0;
  const changes: string[] = [];
  const holder = new SiteReachability(
    () => now,
    (site, up, detail) => changes.push(`${site} ${up ? 'up' : `down: ${detail}`}`),
  );
  holder.failed('a', 'ECONNREFUSED');
  holder.failed('a', 'timeout');
  assert.deepEqual([...holder.unreachable().keys()], ['a']);
  now = 60_000;
  assert.equal(holder.unreachable().size, 0, 'the back-off ran out');
  holder.reached('a');
  holder.reached('a');
  holder.reached('b');
  assert.deepEqual(changes, ['a down: ECONNREFUSED', 'a up']);
});

test("a tenant's site scope limits the sites offered: undefined = every fresh one, [] = none, a list = those", () => {
  const sites = [site('a'), site('b', { load: 1 }), site('c', { fresh: false })];
  const cases: {
    name: string;
    scope: readonly string[] | undefined;
    tried?: string[];
    chosen: string | undefined;
    excluded: Record<string, string>;
    alternatives: number;
  }[] = [
    { name: 'no scope: every fresh site', scope: undefined, chosen: 'a', excluded: { c: 'stale' }, alternatives: 1 },
    {
      name: '[]: local only',
      scope: [],
      chosen: undefined,
      excluded: { a: 'not_in_tenant_scope', b: 'not_in_tenant_scope', c: 'not_in_tenant_scope' },
      alternatives: 0,
    },
    {
      name: 'a list: only those',
      scope: ['b'],
      chosen: 'b',
      excluded: { a: 'not_in_tenant_scope', c: 'not_in_tenant_scope' },
      alternatives: 0,
    },
    {
      name: 'an in-scope site still has to be fresh',
      scope: ['c'],
      chosen: undefined,
      excluded: { a: 'not_in_tenant_scope', b: 'not_in_tenant_scope', c: 'stale' },
      alternatives: 0,
    },
    {
      name: 'scope is told before already tried',
      scope: ['b'],
      tried: ['a', 'b'],
      chosen: undefined,
      excluded: { a: 'not_in_tenant_scope', b: 'already_tried', c: 'not_in_tenant_scope' },
      alternatives: 0,
    },
  ];
  for (const c of cases) {
    const choice = chooseSite(req({ scope: c.scope, triedSites: new Set(c.tried) }), sites, NONE, 0);
    assert.equal(choice.chosen?.id, c.chosen, c.name);
    assert.deepEqual(Object.fromEntries(choice.excluded.map((e) => [e.site, e.code])), c.excluded, c.name);
    assert.equal(choice.alternatives, c.alternatives, c.name);
  }
  // A forwarded request never leaves, whatever its scope says.
  assert.deepEqual(
    chooseSite(req({ scope: ['a'], forwarded: true }), [site('a')], NONE, 0).excluded.map((e) => e.code),
    ['forwarded'],
  );
  // The detail says what the scope allows.
  assert.equal(
    chooseSite(req({ scope: [] }), [site('a')], NONE, 0).excluded[0]?.detail,
    "the tenant's requests stay on this site (its sites = [])",
  );
  assert.equal(
    chooseSite(req({ scope: ['b', 'c'] }), [site('a')], NONE, 0).excluded[0]?.detail,
    "the tenant may be forwarded to 'b', 'c' only",
  );
});

test('a site scope: undefined = every site, [] = none, else the sites it names', () => {
  // The tenants' `sites` scope (docs/tenants.md), one rule for the site choice and the remote model listing.
  assert.equal(inSiteScope(undefined, 'east'), true);
  assert.equal(inSiteScope([], 'east'), false);
  assert.equal(inSiteScope(['east'], 'east'), true);
  assert.equal(inSiteScope(['east'], 'west'), false);
});
