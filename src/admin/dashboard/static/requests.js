// Requests view: the last requests the gateway finished (the ring of request records: the request
// log's fields with each attempt's routing decision), newest first, from the feed: the newest on
// connect, then each finished request as the feed's `requests` event; filtered by model, node,
// tenant and status on the gateway (a changed filter opens a new feed with it: app.js). A row opens its attempts and the routing decision each one got: the
// policy, its reason, every candidate's score (the chosen one marked) and every exclusion with why.

import { html } from './html.js';
import { useState } from 'preact/hooks';
import { shown, T, utcOf } from './text.js';

const STATUSES = [
  ['', 'any status'],
  ['2xx', '2xx'],
  ['4xx', '4xx'],
  ['429', '429'],
  ['5xx', '5xx'],
  ['error', 'any error'],
];

/** The filters the Requests view starts with (none). */
export const NO_FILTERS = { model: '', node: '', tenant: '', status: '' };

const where = (r) => r.node ?? (r.site === undefined ? undefined : `site:${r.site}`);
const ms = (value) => (typeof value === 'number' ? `${value} ms` : '—');
const statusClass = (status) => (status >= 500 ? 'status-5xx' : status >= 400 ? 'status-4xx' : 'status-ok');

function RouteDetail({ route, chosen }) {
  if (route === undefined)
    return html`<p class="muted">no routing decision recorded (a remote site, or refused before routing)</p>`;
  const best = Math.min(...(route.scores ?? []).map((s) => s.score ?? Infinity));
  return html`<div class="route">
    <p>policy <b>${T(route.policy)}</b> chose <b class="chosen-node">${T(chosen)}</b>: <span class="route-reason">${T(route.reason)}</span></p>
    <table class="scores"><thead><tr><th>candidate</th><th class="num">score (lower is better)</th><th></th></tr></thead>
    <tbody>${(route.scores ?? []).map(
      (s) => html`<tr data-node=${s.node} data-chosen=${s.node === chosen ? 'yes' : 'no'}>
      <td>${T(s.node)}</td><td class="num">${s.score === null ? 'n/a' : s.score}</td>
      <td>${s.node === chosen ? '✔ chosen' : s.score === best ? 'tied' : ''}</td></tr>`,
    )}</tbody></table>
    ${
      (route.excluded ?? []).length === 0
        ? null
        : html`<table class="excluded"><thead><tr><th>excluded</th><th>why</th><th>detail</th></tr></thead>
      <tbody>${route.excluded.map((e) => html`<tr data-node=${e.node} data-code=${e.code}><td>${T(e.node)}</td><td>${T(e.code)}</td><td>${T(e.detail ?? '')}</td></tr>`)}</tbody></table>`
    }
    ${route.more ? html`<p class="muted">and ${route.more} more nodes</p>` : null}
  </div>`;
}

function RequestDetail({ r }) {
  const facts = [
    ['request id', r.request_id],
    ['endpoint', r.endpoint],
    ['model asked', r.model_requested],
    ['served model', r.model],
    ['tenant', r.tenant],
    ['from site', r.from_site],
    ['refusal', r.refusal],
    ['error', r.error],
    ['queue wait', ms(r.queue_wait_ms)],
    ['first byte', ms(r.first_byte_ms)],
    ['first token', ms(r.first_token_ms)],
    ['inter-token', ms(r.inter_token_ms)],
    ['duration', ms(r.duration_ms)],
    [
      'tokens',
      r.prompt_tokens === undefined
        ? undefined
        : `${r.prompt_tokens} prompt + ${r.completion_tokens ?? 0} completion (${r.tokens_from})`,
    ],
    ['bytes', `${r.bytes_in} in, ${r.bytes_out} out`],
    ['client left', r.client_aborted ? 'yes' : undefined],
  ].filter(([, v]) => v !== undefined && v !== '');
  return html`<div class="request-detail" data-seq=${r.seq}>
    <dl class="facts">${facts.map(([k, v]) => html`<dt>${k}</dt><dd>${T(v)}</dd>`)}</dl>
    ${r.prompt === undefined ? null : html`<details class="prompt"><summary>prompt text ([log] bodies${r.prompt_truncated ? ', cut at the bound' : ''})</summary><pre class="bodies">${shown(r.prompt)}</pre></details>`}
    <h3>Attempts <span class="muted">${r.attempts.length}</span></h3>
    ${
      r.attempts.length === 0
        ? html`<p class="muted">none: refused before any node was tried</p>`
        : html`<ol class="attempts">${r.attempts.map(
            (a, i) => html`<li data-attempt=${i} data-outcome=${a.outcome}>
        <b>${T(a.node ?? `site:${a.site}`)}</b> — <span class=${a.outcome === 'success' ? 'status-ok' : 'status-5xx'}>${T(a.outcome)}</span>${a.status === undefined ? '' : ` (${a.status})`}
        ${a.node === undefined ? null : html`<${RouteDetail} route=${a.route} chosen=${a.node} />`}
      </li>`,
          )}</ol>`
    }
  </div>`;
}

/** `answer`: the feed's requests ({ state, records, kept, capacity }); `filters` and `setFilters`: app.js's. */
export function RequestsView({ answer, filters, setFilters, models, nodes }) {
  const [open, setOpen] = useState(null);
  const set = (name) => (e) => setFilters({ ...filters, [name]: e.currentTarget.value.trim() });
  return html`<section id="requests" data-state=${answer.state}>
    <h2>Requests <span class="muted">${answer.records.length} shown${answer.capacity ? ` · the gateway keeps the last ${answer.capacity}` : ''}</span></h2>
    <form class="filters" id="requests-filters" onSubmit=${(e) => e.preventDefault()}>
      <label>model <select name="model" value=${filters.model} onChange=${set('model')}><option value="">any</option>${models.map((m) => html`<option value=${m.id}>${shown(m.id)}</option>`)}</select></label>
      <label>node <select name="node" value=${filters.node} onChange=${set('node')}><option value="">any</option>${nodes.map((n) => html`<option value=${n}>${shown(n)}</option>`)}</select></label>
      <label>tenant <input name="tenant" value=${filters.tenant} onChange=${set('tenant')} placeholder="any" size="10" /></label>
      <label>status <select name="status" value=${filters.status} onChange=${set('status')}>${STATUSES.map(([v, t]) => html`<option value=${v}>${t}</option>`)}</select></label>
    </form>
    ${answer.state === 'error' ? html`<p class="error" id="requests-error">${T(answer.message)}</p>` : null}
    ${answer.state === 'ok' && answer.records.length === 0 ? html`<p class="muted" id="no-requests">No requests${Object.values(filters).some((v) => v !== '') ? ' match these filters' : ' yet'}.</p>` : null}
    <div class="scroll"><table class="requests">
      <thead><tr><th>time (UTC)</th><th>status</th><th>model</th><th>node</th><th>tenant</th><th class="num">attempts</th><th class="num">duration</th><th class="num">tokens</th><th>id</th></tr></thead>
      <tbody>${answer.records.map(
        (
          r,
        ) => html`<tr key=${r.seq} class=${`request ${statusClass(r.status)}`} data-seq=${r.seq} data-request-id=${r.request_id} data-status=${r.status}
          tabindex="0" aria-expanded=${open === r.seq} onClick=${() => setOpen(open === r.seq ? null : r.seq)} onKeyDown=${(e) => e.key === 'Enter' && setOpen(open === r.seq ? null : r.seq)}>
          <td class="time">${utcOf(r.time)}</td><td>${r.status}${r.refusal ? html` <span class="muted">${T(r.refusal)}</span>` : ''}</td>
          <td>${T(r.model ?? r.model_requested ?? '—')}</td><td>${T(where(r) ?? '—')}</td><td>${T(r.tenant ?? '—')}</td>
          <td class="num">${r.attempts.length}</td><td class="num">${ms(r.duration_ms)}</td>
          <td class="num">${r.prompt_tokens === undefined ? '—' : `${r.prompt_tokens}+${r.completion_tokens ?? 0}`}</td><td class="rid">${T(r.request_id)}</td>
        </tr>${open === r.seq ? html`<tr class="detail-row" key=${`d${r.seq}`}><td colspan="9"><${RequestDetail} r=${r} /></td></tr>` : null}`,
      )}</tbody>
    </table></div>
  </section>`;
}
