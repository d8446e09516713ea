// The dashboard page: one live feed drives every view but Tenants and the cluster line, which poll GET tenants and GET runtime (no reloads). When the gateway
// asks for the admin token, the page asks the operator and keeps it in session storage only.

import { html } from './html.js';
import { render } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { startFeed } from './feed.js';
import { applyEvent, emptyState } from './store.js';
import { FleetView, ModelsView } from './fleet.js';
import { TrafficView } from './traffic.js';
import { EventsView, ExplainView } from './events.js';
import { SitesView } from './sites.js';
import { TenantsView } from './tenants.js';
import { ClusterView } from './cluster.js';
import { RequestsView } from './requests.js';
import { ActionButton, ActionResult, runAction, useAccess } from './actions.js';
import { useModelsAdmin } from './models-admin.js';

const TOKEN_KEY = 'switchyard.adminToken';

/**
 * What rendering costs, for the browser test and for anyone profiling a large fleet: the time from
 * opening the page to the first fleet on screen (firstRenderMs), the part of it from the feed's
 * first event to that render (firstRenderCostMs: the page's own work, without the page load and
 * the gateway's answer), and per feed event the time to apply and render it.
 */
const timings = { firstRenderMs: null, firstRenderCostMs: null, nodes: 0, updates: [] };
window.__switchyardTimings = timings;

function recordRender(startedAt, nodes) {
  if (startedAt === null) return;
  const now = performance.now();
  if (timings.firstRenderMs === null && nodes > 0) {
    timings.firstRenderMs = now;
    timings.firstRenderCostMs = now - startedAt;
  } else timings.updates.push(now - startedAt);
  if (timings.updates.length > 1000) timings.updates.shift();
  timings.nodes = nodes;
}

function FeedStatus({ status }) {
  const [, setTick] = useState(0);
  useEffect(() => {
    if (status.state !== 'lost') return undefined;
    const timer = setInterval(() => setTick((n) => n + 1), 1000);
    return () => clearInterval(timer);
  }, [status]);
  const text =
    status.state === 'live'
      ? 'live'
      : status.state === 'connecting'
        ? 'connecting…'
        : status.state === 'lost'
          ? `feed lost (${status.error}); reconnecting in ${Math.max(0, Math.ceil((status.retryAt - Date.now()) / 1000))} s`
          : status.state;
  return html`<span id="feed-status" class=${`feed feed-${status.state}`} data-state=${status.state} role="status">${text}</span>`;
}

function TokenPrompt({ onToken, wrong }) {
  const submit = (event) => {
    event.preventDefault();
    const token = String(new FormData(event.currentTarget).get('token') ?? '').trim();
    if (token !== '') onToken(token);
  };
  return html`<form id="token-form" class="token" onSubmit=${submit}>
    <h2>Admin token</h2>
    <p>${wrong ? 'That token was refused. ' : ''}This gateway needs its admin token ([admin] token). It is kept in this tab's session storage only.</p>
    <input name="token" type="password" autocomplete="off" aria-label="admin token" autofocus />
    <button type="submit">Open</button>
  </form>`;
}

function App() {
  const [token, setToken] = useState(() => sessionStorage.getItem(TOKEN_KEY) ?? '');
  const [status, setStatus] = useState({ state: 'connecting' });
  const [state, setState] = useState(emptyState);
  const [series, setSeries] = useState(undefined);
  const [filter, setFilter] = useState('');
  const [busy, setBusy] = useState(false);
  const access = useAccess(token);
  const modelsAdmin = useModelsAdmin(token);
  const eventAt = useRef(null);
  useEffect(() => {
    const onEvent = (name, data) => {
      eventAt.current ??= performance.now();
      setState((s) => applyEvent(s, name, data));
    };
    return startFeed({ token, onStatus: setStatus, onEvent });
  }, [token]);
  useLayoutEffect(() => {
    recordRender(eventAt.current, state.nodes.size);
    eventAt.current = null;
  }, [state]);
  const useToken = (next) => {
    sessionStorage.setItem(TOKEN_KEY, next);
    setToken(next);
  };
  // One action at a time; its answer in words, beside its button (actions.js).
  const onAct = async (action) => {
    setBusy(true);
    try {
      return await runAction(token, action);
    } finally {
      setBusy(false);
    }
  };
  if (status.state === 'unauthorized') return html`<${TokenPrompt} onToken=${useToken} wrong=${token !== ''} />`;
  return html`<header>
      <h1>Switchyard</h1>
      <${FeedStatus} status=${status} />
      <input id="node-filter" placeholder="filter nodes" value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)} />
      <${ActionButton} id="reload-button" access=${access} onAct=${onAct} busy=${busy} label="reload config" action=${{ kind: 'reload', path: 'reload', subject: 'config' }} />
      <span class="tz" title="every time on this page is UTC, as the request log writes it">times in UTC</span>
    </header>
    <main>
      <${ActionResult} access=${access} />
      <${ClusterView} token=${token} />
      <${FleetView} state=${state} filter=${filter} access=${access} onAct=${onAct} busy=${busy} />
      <${ModelsView} models=${state.models} mesh=${state.sites.mesh} admin=${modelsAdmin} access=${access} onAct=${onAct} busy=${busy} />
      <${RequestsView} token=${token} models=${state.models} nodes=${state.order} />
      <${SitesView} sites=${state.sites} />
      <${TenantsView} token=${token} />
      <${TrafficView} state=${state} selected=${series} onSelect=${setSeries} />
      <div class="columns">
        <${EventsView} transitions=${state.transitions} nodes=${state.order} sites=${state.sites.order} />
        <${ExplainView} models=${state.models} token=${token} />
      </div>
    </main>`;
}

const root = document.getElementById('app');
root.textContent = '';
render(html`<${App} />`, root);
