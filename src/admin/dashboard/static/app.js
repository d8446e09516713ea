// The dashboard page: one live feed drives every view (no polling, no reloads). The operator opens
// and closes views; the feed carries what the open ones show (a closed view is one topic fewer, and
// opening or closing one, or changing the Requests filters, opens a new feed with its snapshot).
// When the gateway asks for the admin token, the page asks the operator and keeps it in session
// storage only.

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
import { BatchesView } from './batches.js';
import { NO_FILTERS, RequestsView } from './requests.js';
import { ActionButton, ActionResult, runAction, useAccess } from './actions.js';

const TOKEN_KEY = 'switchyard.adminToken';
const VIEWS_KEY = 'switchyard.closedViews';

/** The views the operator may open and close, and the feed topics each one shows (the cluster line: always). */
const VIEWS = [
  { id: 'fleet', label: 'Fleet', topics: ['nodes'] },
  { id: 'models', label: 'Models', topics: ['models', 'models_admin'] },
  { id: 'requests', label: 'Requests', topics: ['requests', 'models', 'nodes'] },
  { id: 'sites', label: 'Sites', topics: ['sites'] },
  { id: 'tenants', label: 'Tenants', topics: ['tenants'] },
  { id: 'batches', label: 'Batches', topics: ['batches'] },
  { id: 'traffic', label: 'Traffic', topics: ['traffic'] },
  { id: 'events', label: 'Events', topics: ['transitions', 'nodes', 'sites'] },
  { id: 'explain', label: 'Explain', topics: ['models'] },
];
const ALWAYS = ['cluster'];

/** The feed topics the open views show. */
export function topicsOf(open) {
  const topics = new Set(ALWAYS);
  for (const view of VIEWS) if (open.has(view.id)) for (const topic of view.topics) topics.add(topic);
  return [...topics].sort();
}

function closedViews() {
  try {
    const closed = JSON.parse(sessionStorage.getItem(VIEWS_KEY) ?? '[]');
    return new Set(Array.isArray(closed) ? closed : []);
  } catch {
    return new Set();
  }
}

/** One button per view: pressed = open. Closing a view stops its part of the feed. */
function ViewToggles({ open, onToggle }) {
  return html`<nav id="views" aria-label="views">${VIEWS.map(
    (view) =>
      html`<button type="button" class="view-toggle" data-view=${view.id} aria-pressed=${open.has(view.id) ? 'true' : 'false'}
        title=${open.has(view.id) ? `close the ${view.label} view` : `open the ${view.label} view`} onClick=${() => onToggle(view.id)}>${view.label}</button>`,
  )}</nav>`;
}

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
  const [closed, setClosed] = useState(closedViews);
  const [requestFilters, setRequestFilters] = useState(NO_FILTERS);
  const access = useAccess(token);
  const eventAt = useRef(null);
  const open = new Set(VIEWS.map((view) => view.id).filter((id) => !closed.has(id)));
  const topics = topicsOf(open);
  const feedKey = JSON.stringify([topics, requestFilters]);
  useEffect(() => {
    const onEvent = (name, data) => {
      eventAt.current ??= performance.now();
      setState((s) => applyEvent(s, name, data));
    };
    return startFeed({ token, topics, filters: requestFilters, onStatus: setStatus, onEvent });
  }, [token, feedKey]);
  const toggle = (id) => {
    const next = new Set(closed);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    sessionStorage.setItem(VIEWS_KEY, JSON.stringify([...next]));
    setClosed(next);
  };
  const requests = status.state === 'refused' ? { state: 'error', records: [], message: status.error } : state.requests;
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
      <${ViewToggles} open=${open} onToggle=${toggle} />
    </header>
    <main>
      <${ActionResult} access=${access} />
      <${ClusterView} cluster=${state.cluster} />
      ${open.has('fleet') ? html`<${FleetView} state=${state} filter=${filter} access=${access} onAct=${onAct} busy=${busy} />` : null}
      ${open.has('models') ? html`<${ModelsView} models=${state.models} mesh=${state.mesh} admin=${state.modelsAdmin} access=${access} onAct=${onAct} busy=${busy} />` : null}
      ${open.has('requests') ? html`<${RequestsView} answer=${requests} filters=${requestFilters} setFilters=${setRequestFilters} models=${state.models} nodes=${state.order} />` : null}
      ${open.has('sites') ? html`<${SitesView} sites=${state.sites} />` : null}
      ${open.has('tenants') ? html`<${TenantsView} tenants=${state.tenants} />` : null}
      ${open.has('batches') ? html`<${BatchesView} batches=${state.batches} access=${access} onAct=${onAct} busy=${busy} />` : null}
      ${open.has('traffic') ? html`<${TrafficView} state=${state} selected=${series} onSelect=${setSeries} />` : null}
      <div class="columns">
        ${open.has('events') ? html`<${EventsView} transitions=${state.transitions} nodes=${state.order} sites=${state.sites.order} />` : null}
        ${open.has('explain') ? html`<${ExplainView} models=${state.models} token=${token} />` : null}
      </div>
    </main>`;
}

const root = document.getElementById('app');
root.textContent = '';
render(html`<${App} />`, root);
