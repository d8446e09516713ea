// The page's state, changed only by feed events: a snapshot replaces everything, later events patch
// it. Node and site rows keep their object identity unless their contents changed, so a table line
// that did not change is not rendered again.

const NO_SITES = { mesh: false, own: null, rows: new Map(), order: [], skewMs: 0 };

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
  };
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
      const nodes = new Map(data.nodes.map((row) => [row.name, row]));
      const traffic = new Map(Object.entries(data.traffic));
      return {
        nodes,
        order: data.nodes.map((row) => row.name),
        models: data.models,
        sites: sitesOf(data.sites ?? { mesh: false, own: null, sites: [] }, data.now),
        transitions: [...data.transitions].reverse(),
        traffic,
        bucketMs: data.traffic_bucket_ms,
        windowMs: data.traffic_window_ms,
        now: data.now,
        // The gateway's clock minus the page's: ages tick by the gateway's clock.
        skewMs: data.now - Date.now(),
      };
    }
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
      return { ...state, sites: { mesh: data.mesh, own: data.own, rows, order, skewMs: data.now - Date.now() } };
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
