// Fleet and Models views (with [mesh], the remote sites serving each model). State is carried by an icon and a word as well as a colour, and by the
// row's data-state attribute for styling (and for tests).

import { html } from './html.js';
import { Component } from 'preact';
import { list, shown, T } from './text.js';

const ICONS = { healthy: '●', degraded: '◐', dead: '✕', asleep: '☾', waking: '☀', ejected: '⏏', unknown: '?' };
const RESIDENCY_ICONS = { loaded: '▣', on_demand: '▢', asleep: '☾' };

export function stateBadge(state) {
  return html`<span class="badge state-${state}"><span aria-hidden="true">${ICONS[state] ?? '?'}</span> ${shown(state)}</span>`;
}

export function age(at, now) {
  if (at === null || at === undefined) return '';
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  return `${Math.round(s / 3600)}h ago`;
}

function wakeText(wake) {
  if (wake === null) return '—';
  if (wake.waking) return 'waking';
  return wake.last_sent_at === null ? 'sleeps' : 'woken';
}

/** A node serving many models shows the first few; the Models view lists every one. */
const CHIPS_SHOWN = 8;

function ModelChips({ models }) {
  const more = models.length - CHIPS_SHOWN;
  return html`<ul class="chips">${models.slice(0, CHIPS_SHOWN).map(
    (m) => html`<li class="chip residency-${m.residency}" data-model=${m.id} title=${`n_ctx ${m.n_ctx ?? '?'} · slots ${m.slots ?? '?'} · free context ${m.free_ctx ?? 'n/a'}`}>
      <span aria-hidden="true">${RESIDENCY_ICONS[m.residency]}</span> <span class="model-id">${T(m.id)}</span>
      <span class="muted"> ${m.residency.replace('_', ' ')}${m.n_ctx ? ` · ctx ${m.n_ctx}` : ''}${m.slots ? ` · ${m.slots} slots` : ''}${m.free_ctx !== null ? ` · ${m.free_ctx} free` : ''}</span>
    </li>`,
  )}${more > 0 ? html`<li class="chip muted">+${more} more</li>` : null}</ul>`;
}

/** One table line; rendered again only when its row object (or the coarse clock) changes. */
class NodeRow extends Component {
  shouldComponentUpdate(next) {
    return next.row !== this.props.row || next.minute !== this.props.minute;
  }
  render({ row, now }) {
    return html`<tr class="node state-${row.state}" data-node=${row.name} data-state=${row.state}>
      <td class="name">${T(row.name)}</td>
      <td>${stateBadge(row.state)}</td>
      <td>${T(row.discovery)}</td>
      <td>${row.group === null ? '—' : T(row.group)}</td>
      <td>${T(row.kind)}</td>
      <td class="url">${T(row.url)}</td>
      <td class="num">${row.in_flight} / ${row.slots ?? '?'}</td>
      <td class="num">${row.queue}</td>
      <td class="error">${row.last_error === null ? '—' : html`${T(row.last_error)} <span class="muted">${age(row.last_error_at, now)}</span>`}</td>
      <td>${wakeText(row.wake)}</td>
      <td><${ModelChips} models=${row.models} /></td>
    </tr>`;
  }
}

export function FleetView({ state, filter }) {
  const now = state.now;
  const minute = Math.floor(now / 60000);
  const rows = state.order.map((name) => state.nodes.get(name)).filter((row) => row && (!filter || row.name.includes(filter)));
  const counts = {};
  for (const row of state.nodes.values()) counts[row.state] = (counts[row.state] ?? 0) + 1;
  return html`<section id="fleet">
    <h2>Fleet <span class="muted">${state.nodes.size} nodes</span></h2>
    <p class="summary">${Object.entries(counts).map(([s, n]) => html`<span class="count">${stateBadge(s)} ${n}</span> `)}</p>
    <table class="fleet">
      <thead><tr><th>node</th><th>health</th><th>listing</th><th>group</th><th>kind</th><th>url</th><th>in flight / slots</th><th>queue</th><th>last error</th><th>wake</th><th>models</th></tr></thead>
      <tbody>${rows.map((row) => html`<${NodeRow} key=${row.name} row=${row} now=${now} minute=${minute} />`)}</tbody>
    </table>
  </section>`;
}

/** [mesh]: the fresh sites serving a model (with their context and on-demand flag), then the stale ones, marked. */
function RemoteSites({ model }) {
  const sites = model.sites ?? [];
  const stale = model.stale_sites ?? [];
  if (sites.length === 0 && stale.length === 0) return '—';
  return html`<ul class="chips">${sites.map(
    (s) => html`<li class="chip site-fresh" data-site=${s.site} data-state="fresh">
      <span aria-hidden="true">●</span> <span class="site-id">${T(s.site)}</span>
      <span class="muted">${s.ctx === null ? '' : ` · ctx ${s.ctx}`}${s.on_demand ? ' · on demand' : ''}</span></li>`,
  )}${stale.map(
    (site) => html`<li class="chip site-stale" data-site=${site} data-state="stale" title="its last record lists the model but is stale: not routed there">
      <span aria-hidden="true">◌</span> <span class="site-id">${T(site)}</span> <span class="muted">stale, not serving</span></li>`,
  )}</ul>`;
}

export function ModelsView({ models, mesh }) {
  return html`<section id="models">
    <h2>Models <span class="muted">${models.length}</span></h2>
    <table class="models">
      <thead><tr><th>model</th><th>aliases</th><th>served now by</th><th>on demand</th><th>after a wake</th><th>largest context</th><th>queued</th>${mesh ? html`<th>remote sites</th>` : null}</tr></thead>
      <tbody>${models.map(
        (m) => html`<tr data-model=${m.id} data-local=${m.nodes.length + m.on_demand.length + m.after_wake.length > 0 ? 'yes' : 'no'}>
          <td class="name">${T(m.id)}</td>
          <td>${list(m.aliases)}</td>
          <td>${list(m.nodes)}</td>
          <td>${list(m.on_demand)}</td>
          <td>${list(m.after_wake)}</td>
          <td class="num">${m.largest_ctx ?? (m.nodes.length + m.on_demand.length + m.after_wake.length > 0 ? '?' : '—')}</td>
          <td class="num">${m.queue}</td>
          ${mesh ? html`<td class="remote"><${RemoteSites} model=${m} /></td>` : null}
        </tr>`,
      )}</tbody>
    </table>
  </section>`;
}
