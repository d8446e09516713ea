// Events (the transition log, newest first, filterable by node or remote site) and Explain (the routing verdict of
// every node for a model and a request size, from GET explain).

import { html } from './html.js';
import { useState } from 'preact/hooks';
import { tokenHeaders } from './feed.js';
import { shown as visible, T, utcTime } from './text.js';

/** The filter's value: '' (all), 'node:<name>' or 'site:<id>' (a node and a site may share a name). */
function matches(filter, t) {
  if (filter === '') return true;
  if (filter.startsWith('node:')) return t.node === filter.slice(5);
  return t.site === filter.slice(5);
}

function subject(t) {
  if (t.node) return T(t.node);
  if (t.site !== undefined) return html`site ${T(t.site)}`;
  return t.kind === 'rejection' ? 'mesh' : 'gateway';
}

export function EventsView({ transitions, nodes, sites }) {
  const [filter, setFilter] = useState('');
  const shown = filter === '' ? transitions : transitions.filter((t) => matches(filter, t));
  return html`<section id="events">
    <h2>Events <span class="muted">${shown.length}</span></h2>
    <label>node or site <select id="events-filter" value=${filter} onChange=${(e) => setFilter(e.currentTarget.value)}>
      <option value="">all</option>
      <optgroup label="nodes">${nodes.map((n) => html`<option value=${`node:${n}`}>${visible(n)}</option>`)}</optgroup>
      ${sites.length === 0 ? null : html`<optgroup label="sites">${sites.map((s) => html`<option value=${`site:${s}`}>${visible(s)}</option>`)}</optgroup>`}
    </select></label>
    <ol class="events">${shown.slice(0, 200).map(
      (t) => html`<li data-kind=${t.kind} data-node=${t.node} data-site=${t.site}>
        <time>${utcTime(t.at)}</time> <span class="kind">${t.kind}</span>${' '}<b>${subject(t)}</b> ${T(t.text)}</li>`,
    )}</ol>
  </section>`;
}

export function ExplainView({ models, token }) {
  const [answer, setAnswer] = useState(null);
  const submit = async (event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const query = new URLSearchParams();
    for (const name of ['model', 'prompt_tokens', 'max_tokens']) {
      const value = String(form.get(name) ?? '').trim();
      if (value !== '') query.set(name, value);
    }
    try {
      const res = await fetch(`explain?${query}`, { headers: tokenHeaders(token), cache: 'no-store' });
      const body = await res.json();
      setAnswer(res.ok ? { ok: true, body } : { ok: false, message: body?.error?.message ?? `status ${res.status}` });
    } catch (error) {
      setAnswer({ ok: false, message: String(error?.message ?? error) });
    }
  };
  return html`<section id="explain">
    <h2>Explain</h2>
    <form id="explain-form" onSubmit=${submit}>
      <label>model <select name="model">${models.map((m) => html`<option value=${m.id}>${visible(m.id)}</option>`)}</select></label>
      <label>prompt tokens <input name="prompt_tokens" type="number" min="0" value="1000" /></label>
      <label>max tokens <input name="max_tokens" type="number" min="0" value="256" /></label>
      <button type="submit">Explain</button>
    </form>
    ${
      answer === null
        ? null
        : answer.ok
          ? html`<div id="explain-result"><p>outcome: <b id="explain-outcome">${T(answer.body.outcome)}</b></p>
          ${
            answer.body.choice === null || answer.body.choice === undefined
              ? html`<p id="explain-choice" class="muted">no node would be chosen now</p>`
              : html`<p id="explain-choice" data-node=${answer.body.choice.node}>policy <b>${T(answer.body.choice.policy)}</b> would choose <b>${T(answer.body.choice.node)}</b>: ${T(answer.body.choice.reason)}</p>`
          }
          <div class="scroll"><table><thead><tr><th>node</th><th>source</th><th>verdict</th><th class="num">score</th><th>reason</th><th>filter</th><th>detail</th></tr></thead>
          <tbody>${answer.body.nodes.map(
            (
              n,
            ) => html`<tr data-node=${n.node} data-verdict=${n.verdict} data-chosen=${answer.body.choice?.node === n.node ? 'yes' : 'no'}>
            <td>${T(n.node)}${answer.body.choice?.node === n.node ? ' ✔ chosen' : ''}</td><td class="source">${T(n.source ?? 'static')}</td><td class="verdict-${n.verdict}">${n.verdict === 'eligible' ? '✔ eligible' : '✕ excluded'}</td>
            <td class="num score">${n.score === undefined ? '—' : n.score}</td>
            <td>${T(n.reason ?? '')}</td><td>${T(n.filter ?? '')}</td><td>${T([n.detail, n.note].filter(Boolean).join('; '))}</td></tr>`,
          )}</tbody></table></div>
          ${answer.body.sites === undefined ? null : html`<${ExplainSites} sites=${answer.body.sites} chosen=${answer.body.site_choice} />`}</div>`
          : html`<p class="error" id="explain-error">${T(answer.message)}</p>`
    }
  </section>`;
}

/** [mesh]: each remote site's verdict for the same request, and the one a forward would go to. */
function ExplainSites({ sites, chosen }) {
  return html`<div class="scroll"><table id="explain-sites"><thead><tr><th>site</th><th>verdict</th><th>reason</th><th>detail</th><th>load</th></tr></thead>
    <tbody>${sites.map(
      (s) => html`<tr data-site=${s.site} data-verdict=${s.verdict}>
      <td>${T(s.site)}${s.site === chosen ? ' (a forward goes here)' : ''}</td><td class="verdict-${s.verdict}">${s.verdict === 'eligible' ? '✔ eligible' : '✕ excluded'}</td>
      <td>${T(s.reason)}</td><td>${T(s.detail)}</td><td>${T(s.load)}</td></tr>`,
    )}</tbody></table></div>`;
}
