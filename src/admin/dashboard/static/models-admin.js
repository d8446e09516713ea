// The model-management side of the Models view: the feed's `models_admin` (GET /admin/models'
// view, docs/models.md, sent when it changes; store.js reads it) — which nodes manage their models (a llama-server router, Ollama), each model's
// desired state, operator holds and failed loads, rendered as the gateway sends them — and the load /
// unload buttons (POST models/load, models/unload) for the nodes that manage models. A refused load
// (e.g. 409 `warm`: the reconciler would undo it) shows the gateway's reason in the action line.

import { html } from './html.js';
import { shown, T } from './text.js';
import { ActionButton } from './actions.js';

/** The desired state as the gateway states it: `pin`, `preload`, `warm=N`, or any other field it sends. */
export function desiredText(desired) {
  if (desired === null || desired === undefined) return '—';
  if (typeof desired !== 'object') return shown(desired);
  const parts = [];
  for (const [key, value] of Object.entries(desired)) {
    if (value === true) parts.push(key);
    else if (typeof value === 'number' && value > 0) parts.push(`${key}=${value}`);
    else if (typeof value === 'string' && value !== '') parts.push(`${key}=${value}`);
  }
  return parts.length === 0 ? '—' : shown(parts.join(' '));
}

/** The management cells of one model row: desired state, failed loads, and a load or unload button per managing node. */
export function ModelActions({ model, admin, access, onAct, busy }) {
  const row = admin.rows.get(model.id);
  const loaded = model.nodes.filter((n) => admin.managed.has(n));
  const onDemand = [...model.on_demand, ...model.after_wake].filter((n) => admin.managed.has(n));
  const button = (kind, node) =>
    html`<${ActionButton} access=${access} onAct=${onAct} busy=${busy} label=${`${kind} on ${node}`}
      action=${{ kind, path: `models/${kind}`, body: { model: model.id, node }, subject: `${model.id} on ${node}` }} />`;
  // A load an operator made stands against the reconciler until its hold ends ([models] operator_hold).
  const held = (row?.held ?? []).map(
    (h) =>
      html`<div class="muted held">held ${h.state === 'unloaded' ? 'off' : 'on'} ${T(h.node)} by the operator${h.replica ? html` through replica ${T(h.replica)}` : ''} until ${T(h.until ?? `${Math.round((h.expires_in_ms ?? 0) / 1000)}s from now`)}</div>`,
  );
  return html`<td class="desired">${desiredText(row?.desired)}${held}${(row?.failures ?? []).map((f) => html`<div class="error">load failed on ${T(f.node)}: ${T(f.reason)}</div>`)}</td>
    <td class="model-actions" data-model=${model.id}>${loaded.length + onDemand.length === 0 ? html`<span class="muted" title="no node serving it manages its models (a llama-server router or Ollama does)">—</span>` : null}
      ${onDemand.map((n) => button('load', n))} ${loaded.map((n) => button('unload', n))}</td>`;
}
