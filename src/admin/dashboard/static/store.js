// The page's state, changed only by feed events: a snapshot replaces everything, later events patch
// it. Node, site and tenant rows keep their object identity unless their contents changed, so a
// table line that did not change is not rendered again. A snapshot carries only the topics the page
// asked for (its open views); the others stay empty.

const NO_SITES = { mesh: false, own: null, rows: new Map(), order: [], skewMs: 0 };
/** Finished requests the page keeps (the feed sends at most these many at once). */
export const REQUESTS_SHOWN = 200;
const LOADING = { state: 'loading' };
const NO_REQUESTS = { state: 'loading', records: [], latest: 0 };

export function emptyState() {
  return {
    nodes: new Map(),
    order: [],
    models: [],
    sites: NO_SITES,
    transitions: [],
    traffic: new Map(),
    bucketMs: 10000,
    windowMs: 900000,
    now: Date.now(),
    skewMs: 0,
    mesh: false,
    requests: NO_REQUESTS,
    tenants: LOADING,
    modelsAdmin: null,
    cluster: null,
    // undefined until the feed says; null: no batch feature (no [server] state_dir).
    batches: undefined,
  };
}

/** GET /admin/models' view as the Models view reads it: null (no model management), or { managed, rows, nodes }. */
export function modelsAdminOf(view) {
  if (!Array.isArray(view?.models) || !Array.isArray(view?.nodes)) return null;
  return {
    managed: new Set(view.nodes.filter((n) => n?.manages_models === true).map((n) => n.name)),
    rows: new Map(view.models.map((m) => [m.model, m])),
    nodes: new Map(view.nodes.map((n) => [n.name, n])),
  };
}

function requestsOf(answer) {
  if (answer === undefined) return NO_REQUESTS;
  return { state: 'ok', records: answer.records, latest: answer.latest, kept: answer.kept, capacity: answer.capacity };
}

/**
 * The Tenants view's state after a `tenants` event: the report rebuilt from its rows, or why there is
 * none. The rows are kept beside a report the view cannot show, so the next change applies to them.
 */
function tenantsAfter(tenants, data) {
  if (typeof data.error === 'string') return { state: 'error', message: data.error };
  if (!Array.isArray(data.changed) || !Array.isArray(data.removed))
    return { state: 'error', message: 'the feed sent a tenants event without rows' };
  const base = data.full || tenants.rows === undefined ? { rows: new Map(), order: [], rest: {} } : tenants;
  const rows = new Map(base.rows);
  for (const name of data.removed) rows.delete(name);
  for (const row of data.changed) rows.set(row?.name, row);
  const order = data.order ?? base.order.filter((name) => rows.has(name));
  const rest = data.rest ?? base.rest;
  const kept = { rows, order, rest };
  if (data.changed.some((t) => typeof t !== 'object' || t === null || typeof t.name !== 'string'))
    return { state: 'error', message: 'the tenants report: a tenant in the report has no name', ...kept };
  return { state: 'ok', ...kept, report: { ...rest, tenants: order.map((name) => rows.get(name)).filter(Boolean) } };
}

function sitesOf(panel, now) {
  return {
    mesh: panel.mesh,
    own: panel.own,
    rows: new Map(panel.sites.map((row) => [row.id, row])),
    order: panel.sites.map((row) => row.id),
    skewMs: now - Date.now(),
  };
}

export function applyEvent(state, name, data) {
  switch (name) {
    case 'snapshot': {
      const nodes = new Map((data.nodes ?? []).map((row) => [row.name, row]));
      const traffic = new Map(Object.entries(data.traffic ?? {}));
      return {
        nodes,
        order: (data.nodes ?? []).map((row) => row.name),
        models: data.models ?? [],
        sites: sitesOf(data.sites ?? { mesh: false, own: null, sites: [] }, data.now),
        transitions: [...(data.transitions ?? [])].reverse(),
        traffic,
        bucketMs: data.traffic_bucket_ms,
        windowMs: data.traffic_window_ms,
        now: data.now,
        // The gateway's clock minus the page's: ages tick by the gateway's clock.
        skewMs: data.now - Date.now(),
        mesh: data.mesh ?? data.sites?.mesh ?? false,
        requests: requestsOf(data.requests),
        // The report comes in its own event (it may wait on the [cluster] store).
        tenants: LOADING,
        modelsAdmin: modelsAdminOf(data.models_admin),
        cluster: data.cluster ?? null,
        batches: data.batches,
      };
    }
    case 'requests': {
      const kept = state.requests.state === 'ok' && data.latest >= state.requests.latest ? state.requests.records : [];
      return { ...state, requests: { ...requestsOf(data), records: [...data.records, ...kept].slice(0, REQUESTS_SHOWN) } };
    }
    case 'tenants':
      return { ...state, tenants: tenantsAfter(state.tenants, data) };
    case 'models_admin':
      return { ...state, modelsAdmin: modelsAdminOf(data) };
    case 'cluster':
      return { ...state, cluster: data };
    case 'batches':
      return { ...state, batches: data };
    case 'nodes': {
      const nodes = new Map(state.nodes);
      for (const name of data.removed) nodes.delete(name);
      for (const row of data.changed) nodes.set(row.name, row);
      return { ...state, nodes, order: data.order ?? state.order.filter((name) => nodes.has(name)) };
    }
    case 'models':
      return { ...state, models: data };
    case 'sites': {
      const rows = new Map(state.sites.rows);
      for (const id of data.removed) rows.delete(id);
      for (const row of data.changed) rows.set(row.id, row);
      const order = data.order ?? state.sites.order.filter((id) => rows.has(id));
      // The gateway's clock minus the page's: the Sites view shows ages by the gateway's clock.
      return { ...state, mesh: data.mesh, sites: { mesh: data.mesh, own: data.own, rows, order, skewMs: data.now - Date.now() } };
    }
    case 'transitions': {
      const seen = new Set(state.transitions.map((t) => t.seq));
      const fresh = data.filter((t) => !seen.has(t.seq)).reverse();
      return { ...state, transitions: [...fresh, ...state.transitions].slice(0, 500) };
    }
    case 'traffic': {
      const traffic = new Map(state.traffic);
      const oldest = data.now - state.windowMs;
      for (const [key, points] of Object.entries(data.series)) {
        const byStart = new Map((traffic.get(key) ?? []).map((p) => [p[0], p]));
        for (const p of points) byStart.set(p[0], p);
        traffic.set(
          key,
          [...byStart.values()].filter((p) => p[0] >= oldest).sort((a, b) => a[0] - b[0]),
        );
      }
      return { ...state, traffic, now: data.now };
    }
    default:
      return state;
  }
}
