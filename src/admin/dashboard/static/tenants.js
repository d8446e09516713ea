// Tenants view: the feed's `tenants` (GET /admin/tenants' TenantsReport, src/tenants/tenant-report.ts:
// the whole report on connect, then the tenants whose counters changed; store.js rebuilds it) — per
// tenant its class, weight, key tags, limits, in flight, queued, usage in the last 60 s (a sliding
// count) and today, and what the per-minute buckets admit now (they refill; named apart so the two
// cannot read as a contradiction); per model its queue by class and tenant. Hidden while the
// gateway has no tenants. A failing or odd answer is shown in the view, and never reaches the others.
// Keys appear only as the short tags the gateway sends (never a key). With [cluster] a line says
// whose counts they are: the whole site's (each replica named, an expired one marked) or, while
// the store is unreachable, this replica's alone.

import { html } from './html.js';
import { useErrorBoundary } from 'preact/hooks';
import { list, T } from './text.js';

const CLASSES = ['interactive', 'standard', 'batch'];
const figures = new Intl.NumberFormat('en-US');

/** A count, a limit (null = none: "—") or a missing figure ("?"). */
function n(value) {
  if (value === null) return '—';
  return typeof value === 'number' && Number.isFinite(value) ? figures.format(value) : '?';
}

/** "used / limit", or just "used" without a limit. */
function of(used, limit) {
  return limit === null || limit === undefined ? n(used) : `${n(used)} / ${n(limit)}`;
}

/** Why a report is not a TenantsReport, or null when it is one. */
function problemOf(body) {
  if (typeof body !== 'object' || body === null) return 'the report is not a JSON object';
  if (!Array.isArray(body.tenants)) return 'the report has no "tenants" list';
  if (body.tenants.some((t) => typeof t !== 'object' || t === null || typeof t.name !== 'string'))
    return 'a tenant in the report has no name';
  return null;
}

/** The feed's tenants state as the view shows it: loading, an error, or a report it can draw. */
function answerOf(tenants) {
  if (tenants?.state !== 'ok') return tenants ?? { state: 'loading' };
  const problem = problemOf(tenants.report);
  return problem === null ? tenants : { state: 'error', message: `the tenants report: ${problem}` };
}

function Remaining({ value, field }) {
  const out = value === 0;
  return html`<span data-field=${field} class=${out ? 'exhausted' : ''} data-exhausted=${out ? 'yes' : 'no'}>${out ? html`<span aria-hidden="true">⚠ </span>` : ''}${n(value)}</span>`;
}

/** A per-minute bucket's refill, for its cell's title. */
function refills(limit, what) {
  if (typeof limit !== 'number') return undefined;
  return `the bucket of ${n(limit)} ${what} per minute: refills continuously (${n(Math.round((limit / 60) * 10) / 10)} a second); a request is admitted while it holds enough`;
}

function TenantRow({ t }) {
  const limits = t.limits ?? {};
  const minute = t.minute ?? {};
  const today = t.today ?? {};
  const remaining = t.remaining ?? {};
  const todayTokens =
    typeof today.promptTokens === 'number' && typeof today.completionTokens === 'number'
      ? today.promptTokens + today.completionTokens
      : undefined;
  return html`<tr class="tenant" data-tenant=${t.name} data-priority=${t.priority}>
    <td class="name">${T(t.name)}</td>
    <td><span class=${`badge class-${t.priority}`}>${T(t.priority)}</span></td>
    <td class="num" data-field="weight">${n(t.weight)}</td>
    <td class="keys" data-field="keys">${list(Array.isArray(t.keys) ? t.keys : [])}</td>
    <td class="num" data-field="in-flight">${of(t.inFlight, limits.maxConcurrent)}</td>
    <td class="num" data-field="queued">${n(t.queued)}</td>
    <td class="num" data-field="minute-requests">${of(minute.requests, limits.requestsPerMinute)}</td>
    <td class="num" data-field="minute-tokens">${of(minute.tokens, limits.tokensPerMinute)}</td>
    <td class="num" data-field="today-requests">${n(today.requests)}</td>
    <td class="num" data-field="today-tokens" title=${`prompt ${n(today.promptTokens)} · completion ${n(today.completionTokens)}`}>${of(todayTokens, limits.tokensPerDay)}</td>
    <td class="num" title=${refills(limits.requestsPerMinute, 'requests')}><${Remaining} value=${remaining.requests} field="remaining-requests" /></td>
    <td class="num" title=${refills(limits.tokensPerMinute, 'tokens')}><${Remaining} value=${remaining.tokens} field="remaining-tokens" /></td>
    <td class="num" title="tokens_per_day less the UTC day's prompt and completion tokens (open reservations included)"><${Remaining} value=${remaining.budget} field="remaining-budget" /></td>
  </tr>`;
}

function Queues({ queues }) {
  const models = Object.keys(queues ?? {}).sort();
  if (models.length === 0) return html`<p class="muted" id="tenant-queues-none">No model has requests queued.</p>`;
  return html`<table id="tenant-queues">
    <thead><tr><th>model</th>${CLASSES.map((c) => html`<th class="num">${c}</th>`)}<th>by tenant</th></tr></thead>
    <tbody>${models.map((model) => {
      const q = queues[model] ?? {};
      const byTenant = Object.entries(q.byTenant ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return html`<tr data-model=${model}>
        <td>${T(model)}</td>
        ${CLASSES.map((c) => html`<td class="num" data-class=${c}>${n(q.byClass?.[c] ?? 0)}</td>`)}
        <td data-field="by-tenant">${byTenant.length === 0 ? '—' : byTenant.flatMap(([name, count], i) => [i === 0 ? '' : ', ', T(name), `: ${n(count)}`])}</td>
      </tr>`;
    })}</tbody>
  </table>`;
}

/** [cluster]: whose counts these are — the whole site's (its replicas named), or this replica's alone and why. */
function Scope({ report }) {
  if (report.scope === 'replica') {
    return html`<p class="error" id="tenants-scope" data-scope="replica" role="status">This replica's counts only: the store is unreachable${typeof report.storeReason === 'string' ? html` (${T(report.storeReason)})` : ''}.</p>`;
  }
  if (report.scope !== 'site') return '';
  const names = Object.keys(report.replicas ?? {}).sort();
  return html`<p class="muted" id="tenants-scope" data-scope="site">Whole site, ${names.length} replica${names.length === 1 ? '' : 's'}: ${names.flatMap(
    (name, i) => {
      const r = report.replicas[name] ?? {};
      const seen = typeof r.ageMs === 'number' ? ` ${Math.round(r.ageMs / 1000)} s ago` : '';
      return [
        i === 0 ? '' : ', ',
        html`<span data-replica=${name} data-live=${r.live === true ? 'yes' : 'no'}>${T(name)}${r.expired === true ? ` (expired: last seen${seen}; its in-flight and queued left out)` : ''}</span>`,
      ];
    },
  )}</p>`;
}

function TenantsPanel({ feed }) {
  const answer = answerOf(feed);
  if (answer.state === 'loading') return html`<section id="tenants" data-state="loading" hidden></section>`;
  if (answer.state === 'error') {
    return html`<section id="tenants" data-state="error">
      <h2>Tenants</h2>
      <p class="error" id="tenants-error" role="status">${T(answer.message)}</p>
    </section>`;
  }
  const { tenants, queues } = answer.report;
  // No tenants configured: nothing to show, and no room taken.
  if (tenants.length === 0) return html`<section id="tenants" data-state="none" hidden></section>`;
  return html`<section id="tenants" data-state="ok">
    <h2>Tenants <span class="muted">${tenants.length}</span></h2>
    <${Scope} report=${answer.report} />
    <div class="scroll"><table class="tenants">
      <thead><tr><th rowspan="2">tenant</th><th rowspan="2">class</th><th rowspan="2" class="num">weight</th><th rowspan="2">keys</th>
        <th rowspan="2" class="num">in flight</th><th rowspan="2" class="num">queued</th>
        <th colspan="2" class="group" id="tenants-used-head">used in the last 60 s <span class="muted">/ limit per minute</span></th>
        <th colspan="2" class="group">used today (UTC)</th>
        <th colspan="2" class="group" id="tenants-bucket-head">admitted now <span class="muted">(refilling bucket)</span></th>
        <th rowspan="2" class="num">tokens left today</th></tr>
        <tr><th class="num">requests</th><th class="num">tokens</th><th class="num">requests</th><th class="num">tokens</th>
        <th class="num">requests</th><th class="num">tokens</th></tr></thead>
      <tbody>${tenants.map((t) => html`<${TenantRow} key=${t.name} t=${t} />`)}</tbody>
    </table></div>
    <p class="muted terms" id="tenants-terms"><b>Used in the last 60 s</b> is a sliding count of what was admitted. <b>Admitted now</b> is what a per-minute limit's bucket lets in at this moment: it refills continuously (a 60th of the limit each second), so after a burst it is full again long before the burst leaves the last 60 s — the two need not add up to the limit.</p>
    <h3>Queues by class and tenant</h3>
    <div class="scroll"><${Queues} queues=${queues} /></div>
  </section>`;
}

/** The view, fenced: an answer it cannot draw shows as its own error, and the other views stay. */
export function TenantsView({ tenants }) {
  const [error] = useErrorBoundary();
  if (error) {
    return html`<section id="tenants" data-state="error">
      <h2>Tenants</h2>
      <p class="error" id="tenants-error" role="status">the Tenants view could not show the answer: ${T(error?.message ?? error)}</p>
    </section>`;
  }
  return html`<${TenantsPanel} feed=${tenants} />`;
}
