// What a feature adds to reports, logs and metrics (issue 39, docs/design.md "What a feature adds to
// reports, logs and metrics"): a feature sets its own fields on the request's report under its name
// and says, in its own folder, what they give the request log's line and its per-request series
// (core/request-fields.ts), and what it adds to /admin/explain (core/feature.ts `explain`). So the
// central files that report a request, write its log line, count it, and explain or show the fleet
// name no feature. Checked on the source text (comments and docs/ references left out, strings
// kept: a metric's name or a log field is a string): a feature named in one of them fails, but for
// the entries of STILL_NAMED, each with why it is still there; an entry no longer needed fails too,
// so the list only shrinks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SRC } from '#test/fixtures/source-tree.ts';

/** The central files: the request's report and events, the request log, the metrics, explain, hosts and the dashboard's traffic. */
const CENTRAL: readonly string[] = [
  'proxy/request/request-report.ts',
  'proxy/request/proxy-events.ts',
  'logs/request-line.ts',
  'logs/request-record.ts',
  'logs/request-ring.ts',
  'logs/request-log.ts',
  'logs/request-query.ts',
  'logs/line-writer.ts',
  'metrics/prometheus.ts',
  'metrics/request-metrics.ts',
  'metrics/model-label.ts',
  'metrics/model-names.ts',
  'metrics/prefix-hits.ts',
  'admin/explain.ts',
  'admin/admin-routes.ts',
  'admin/admin-deps.ts',
  'admin/hosts-view.ts',
  'admin/runtime-view.ts',
  'admin/health-report.ts',
  'admin/dashboard/traffic-history.ts',
  'admin/dashboard/traffic-ring.ts',
  'admin/dashboard/latency-histogram.ts',
];

/** How each feature is named in code (its folder's words, its fields', its metrics' and its log fields'). */
const FEATURE_WORDS: Readonly<Record<string, RegExp>> = {
  translation: /translat/i,
  mesh: /\bmesh\b|\bpeers?\b|from_site|from_tenant|claimed|site_choice|remote|forward/i,
  tenants: /tenant/i,
  tracing: /\btrac(?:e|es|ing)\b|span\b|traceparent/i,
  cluster: /cluster|replica/i,
};

/** A central file that still names a feature, and why (remove the entry when the naming goes). */
/** Why the tenant stays a label of every request. */
const TENANT_IS_THE_QUEUE =
  "every request's tenant is its queue identity (the caller's queue name; OPEN_CALLER's `default` where no tenant is configured), which the scheduler's fair queue and the sessions read: a label of every request, not a field of the tenants feature";

const STILL_NAMED: readonly { readonly file: string; readonly feature: string; readonly reason: string }[] = [
  { file: 'proxy/request/request-report.ts', feature: 'tenants', reason: TENANT_IS_THE_QUEUE },
  {
    file: 'proxy/request/request-report.ts',
    feature: 'tracing',
    reason:
      'the report’s observer is the seam’s one watch of a request’s routing and attempts, typed by core/tracing.ts’s port (RoutingSpan, AttemptSpan); tracing’s request half sets it',
  },
  {
    file: 'proxy/request/proxy-events.ts',
    feature: 'mesh',
    reason:
      'the forwarding events (mesh:forwarded, mesh:forwarded-in, mesh:site-reachability) are request-plane messages to the owner, bridged from workers by name (workers/event-bridge.ts); only the mesh’s files (the forwards feature) and the dashboard’s site events read them',
  },
  {
    file: 'proxy/request/proxy-events.ts',
    feature: 'tenants',
    reason: `${TENANT_IS_THE_QUEUE}; proxy:tenant-limited is the tenants’ 429, bridged from workers by name`,
  },
  { file: 'logs/request-line.ts', feature: 'tenants', reason: `the line’s tenant: ${TENANT_IS_THE_QUEUE}` },
  { file: 'logs/request-query.ts', feature: 'tenants', reason: `/admin/requests?tenant= filters on it: ${TENANT_IS_THE_QUEUE}` },
  {
    file: 'admin/explain.ts',
    feature: 'mesh',
    reason:
      'explain’s sites, site_choice and `forward` outcome are decided with the nodes’ (a session a site served changes the policy’s ask; a node outcome with a site to take it becomes a forward): a feature’s explain part adds fields and may change the endpoint judged, not the outcome',
  },
  {
    file: 'admin/explain.ts',
    feature: 'tenants',
    reason: `the queue by class and tenant is the scheduler’s fair-queue report, and a session’s hash is keyed by the tenant: ${TENANT_IS_THE_QUEUE}`,
  },
  {
    file: 'admin/admin-routes.ts',
    feature: 'mesh',
    reason: 'explain’s remote sites and a tenant’s site scope are given to explainRouting (see admin/explain.ts)',
  },
  {
    file: 'admin/admin-routes.ts',
    feature: 'tenants',
    reason: `explain?tenant= routes as that tenant’s request (its class and site scope): ${TENANT_IS_THE_QUEUE}`,
  },
  { file: 'admin/admin-deps.ts', feature: 'mesh', reason: 'AdminDeps.remote: explain’s remote sites (see admin/explain.ts)' },
  {
    file: 'metrics/model-names.ts',
    feature: 'mesh',
    reason:
      'a model a fresh remote site serves is as real as a listed one for its bounded metrics label: read through routing’s RemoteSiteView (the mesh gives the sites, FeatureParts.remoteSites)',
  },
];

/** Comments and docs/ references blanked (line breaks kept); strings kept. */
const code = (text: string): string =>
  text
    .replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (c) => c.replace(/[^\n]/g, ' '))
    .replace(/docs\/[\w./-]+\.md(?:#[\w-]+)?/g, (d) => d.replace(/[^\n]/g, ' '));

/** Every (file, feature) where a central file names a feature, with the first line that does. */
function namings(): { readonly file: string; readonly feature: string; readonly line: string }[] {
  return CENTRAL.flatMap((file) => {
    const lines = code(readFileSync(join(SRC, file), 'utf8')).split('\n');
    return Object.entries(FEATURE_WORDS).flatMap(([feature, words]) => {
      const at = lines.findIndex((line) => words.test(line));
      return at < 0 ? [] : [{ file, feature, line: `${file}:${at + 1}: ${(lines[at] ?? '').trim()}` }];
    });
  });
}

const listed = (n: { file: string; feature: string }): boolean =>
  STILL_NAMED.some((e) => e.file === n.file && e.feature === n.feature);

test('the central report, log, metrics and admin files name no feature, but the listed ones with their reasons', () => {
  assert.deepEqual(
    namings()
      .filter((n) => !listed(n))
      .map((n) => `${n.feature}: ${n.line}`),
    [],
  );
});

test('every entry of the still-named list is still needed (the list only shrinks) and gives its reason', () => {
  const all = namings();
  assert.deepEqual(
    STILL_NAMED.filter((e) => !all.some((n) => n.file === e.file && n.feature === e.feature)).map(
      (e) => `${e.file} → ${e.feature}`,
    ),
    [],
  );
  for (const e of STILL_NAMED) assert.ok(e.reason.length > 20 && e.feature in FEATURE_WORDS, `${e.file} → ${e.feature}`);
  for (const file of CENTRAL) assert.ok(readFileSync(join(SRC, file), 'utf8').length > 0, file);
});

test('the check sees a feature named in code and strings, not in comments or docs references', () => {
  const named = (text: string): string[] =>
    Object.entries(FEATURE_WORDS)
      .filter(([, words]) => words.test(code(text)))
      .map(([feature]) => feature);
  assert.deepEqual(named("if (e.translated !== undefined) inc('gateway_translated_requests_total');"), ['translation']);
  assert.deepEqual(named("const line = { from_site: e.peer.site }; // the tenant's trace"), ['mesh']);
  assert.deepEqual(named('help: \'tokens (docs/tenants.md, "What is charged")\' /* translated */'), []);
});
