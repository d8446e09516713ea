// Fleet and Models views (with [mesh], the remote sites serving each model). State is carried by an icon and a word as well as a colour, and by the
// row's data-state attribute for styling (and for tests). The columns that matter come first (node, health, load, last error); a
// table wider than the window scrolls in its own box.

import { html } from './html.js';
import { Component } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { list, shown, T, utcTime } from './text.js';
import { ActionButton } from './actions.js';
import { ModelActions } from './models-admin.js';

const ICONS = { healthy: '●', degraded: '◐', dead: '✕', asleep: '☾', waking: '☀', ejected: '⏏', unknown: '?' };
const RESIDENCY_ICONS = { loaded: '▣', on_demand: '▢', asleep: '☾', unavailable: '✕' };

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

/** An age that ticks every second by the gateway's clock (`skewMs`: the gateway's clock minus the page's). */
export function Age({ at, skewMs = 0 }) {
  const [, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((n) => n + 1), 1000);
    return () => clearInterval(timer);
  }, []);
  return html`<span class="age muted" title=${`${utcTime(at)} UTC`}>${age(at, Date.now() + skewMs)}</span>`;
}

/** In flight against the slots: "3 / 8", or "3 (slots unknown)" when no server reported any. */
function load(inFlight, slots) {
  return slots === null || slots === undefined
    ? html`${inFlight} <span class="muted" title="no server reported its slots">(slots unknown)</span>`
    : `${inFlight} / ${slots}`;
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
    (
      m,
    ) => html`<li class="chip residency-${m.residency}" data-model=${m.id} title=${`n_ctx ${m.n_ctx ?? '?'} · slots ${m.slots ?? '?'} · free context ${m.free_ctx ?? 'n/a'}`}>
      <span aria-hidden="true">${RESIDENCY_ICONS[m.residency]}</span> <span class="model-id">${T(m.id)}</span>
      <span class="muted"> ${m.residency.replace('_', ' ')}${m.n_ctx ? ` · ctx ${m.n_ctx}` : ''}${m.slots ? ` · ${m.slots} slots` : ''}${m.free_ctx !== null ? ` · ${m.free_ctx} free` : ''}</span>
    </li>`,
  )}${more > 0 ? html`<li class="chip muted">+${more} more</li>` : null}</ul>`;
}

/** One table line; rendered again only when its row object (or the coarse clock) changes. */
class NodeRow extends Component {
  shouldComponentUpdate(next) {
    return (
      next.row !== this.props.row ||
      next.minute !== this.props.minute ||
      next.access !== this.props.access ||
      next.busy !== this.props.busy
    );
  }
  render({ row, skewMs, access, onAct, busy }) {
    return html`<tr class="node state-${row.state}" data-node=${row.name} data-state=${row.state}>
      <td class="name">${T(row.name)}</td>
      <td>${stateBadge(row.state)}</td>
      <td class="num">${load(row.in_flight, row.slots)}</td>
      <td class="num">${row.queue}</td>
      ${
        row.last_error === null
          ? html`<td class="no-error muted">no error</td>`
          : html`<td class="error">${T(row.last_error)} <${Age} at=${row.last_error_at} skewMs=${skewMs} /></td>`
      }
      <td class="wake">${wakeText(row.wake)}${row.wake === null ? null : html` <${ActionButton} access=${access} onAct=${onAct} busy=${busy} label="wake" action=${{ kind: 'wake', path: `wake?node=${encodeURIComponent(row.name)}`, subject: row.name }} />`}</td>
      <td><${ModelChips} models=${row.models} /></td>
      <td>${T(row.discovery)}</td>
      <td>${row.group === null ? '—' : T(row.group)}</td>
      <td>${T(row.kind)}</td>
      <td class="source" title="where the node came from: static = the [[nodes]] list, else its [[node_sources]] entry">${T(row.source ?? 'static')}</td>
      <td class="url">${T(row.url)}</td>
    </tr>`;
  }
}

export function FleetView({ state, filter, access, onAct, busy }) {
  const now = state.now;
  const minute = Math.floor(now / 60000);
  const rows = state.order.map((name) => state.nodes.get(name)).filter((row) => row && (!filter || row.name.includes(filter)));
  const counts = {};
  for (const row of state.nodes.values()) counts[row.state] = (counts[row.state] ?? 0) + 1;
  return html`<section id="fleet">
    <h2>Fleet <span class="muted">${state.nodes.size} nodes</span></h2>
    <p class="summary">${Object.entries(counts).map(([s, n]) => html`<span class="count">${stateBadge(s)} ${n}</span> `)}</p>
    <div class="scroll"><table class="fleet">
      <thead><tr><th>node</th><th>health</th><th class="num">in flight / slots</th><th class="num">queue</th><th>last error</th><th>wake</th><th>models</th><th>listing</th><th>group</th><th>kind</th><th>source</th><th>url</th></tr></thead>
      <tbody>${rows.map((row) => html`<${NodeRow} key=${row.name} row=${row} now=${now} minute=${minute} skewMs=${state.skewMs} access=${access} onAct=${onAct} busy=${busy} />`)}</tbody>
    </table></div>
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
    (
      site,
    ) => html`<li class="chip site-stale" data-site=${site} data-state="stale" title="its last record lists the model but is stale: not routed there">
      <span aria-hidden="true">◌</span> <span class="site-id">${T(site)}</span> <span class="muted">stale, not serving</span></li>`,
  )}</ul>`;
}

export function ModelsView({ models, mesh, admin = null, access, onAct, busy }) {
  return html`<section id="models">
    <h2>Models <span class="muted">${models.length}</span></h2>
    <div class="scroll"><table class="models">
      <thead><tr><th>model</th><th>aliases</th><th>served now by</th><th>on demand</th><th>after a wake</th><th>largest context</th><th>queued</th>${mesh ? html`<th>remote sites</th>` : null}${admin === null ? null : html`<th>desired</th><th>load / unload</th>`}</tr></thead>
      <tbody>${models.map(
        (
          m,
        ) => html`<tr data-model=${m.id} data-local=${m.nodes.length + m.on_demand.length + m.after_wake.length > 0 ? 'yes' : 'no'}>
          <td class="name">${T(m.id)}</td>
          <td>${list(m.aliases)}</td>
          <td>${list(m.nodes)}</td>
          <td>${list(m.on_demand)}</td>
          <td>${list(m.after_wake)}</td>
          <td class="num">${m.largest_ctx ?? (m.nodes.length + m.on_demand.length + m.after_wake.length > 0 ? '?' : '—')}</td>
          <td class="num">${m.queue}</td>
          ${mesh ? html`<td class="remote"><${RemoteSites} model=${m} /></td>` : null}
          ${admin === null ? null : html`<${ModelActions} model=${m} admin=${admin} access=${access} onAct=${onAct} busy=${busy} />`}
        </tr>`,
      )}</tbody>
    </table></div>
  </section>`;
}
