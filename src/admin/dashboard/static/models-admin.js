// The model-management side of the Models view: the feed's `models_admin` (GET /admin/models'
// view, docs/models.md, sent when it changes; store.js reads it) — which nodes manage their models (a llama-server router, Ollama), each model's
// desired state, operator holds and failed loads, rendered as the gateway sends them — and the load /
// unload buttons (POST models/load, models/unload) for the nodes that manage models. An unload asks
// first, naming the requests in flight and queued for the model; a load on a full node too. What the
// gateway is known to refuse (a pinned model's unload, a node with a switch under way) is disabled
// with the reason. A refused action (e.g. 409 `warm`: the reconciler would undo it) shows the
// gateway's reason beside its button.

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

/** "1 request" / "3 requests". */
const requests = (n) => `${n} request${n === 1 ? '' : 's'}`;

/**
 * What the gateway is known to refuse (docs/models.md), before it is asked: { short, why } or null.
 * An unload of a pinned model; any action on a node with a switch under way (one at a time per
 * node) or that is unavailable (asleep, dead). Requests in flight or queued are not here: they
 * come and go by the second, so the confirmation names them and the gateway has the last word.
 */
export function refusalOf(kind, modelId, nodeName, admin) {
  const desired = admin.rows.get(modelId)?.desired;
  if (kind === 'unload' && desired?.pin === true)
    return { short: 'pinned', why: `'${modelId}' is pinned ([[models.available]] pin = true): the gateway refuses to unload it` };
  const node = admin.nodes?.get(nodeName);
  if (node?.switch !== null && node?.switch !== undefined) {
    const sw = node.switch;
    return {
      short: 'switch under way',
      why: `a ${sw.action} of '${sw.model}' (by ${sw.by}) is under way on ${nodeName}: one load or unload at a time per node`,
    };
  }
  if (node?.busy === true)
    return { short: 'switch under way', why: `a load or unload is under way on ${nodeName}: one at a time per node` };
  if (typeof node?.unavailable === 'string') return { short: 'node unavailable', why: `${nodeName} is ${node.unavailable}` };
  return null;
}

/**
 * The question an action that interrupts users asks first, or null. An unload: how many requests
 * for the model are in flight on the node and queued in the gateway now (the gateway refuses while
 * any are), and where its next requests go. A load on a node at its max: an idle model there is
 * unloaded first to make room.
 */
export function confirmationOf(kind, model, nodeName, admin) {
  const node = admin.nodes?.get(nodeName);
  if (kind === 'unload') {
    const inFlight = node?.in_flight?.[model.id] ?? 0;
    const queued = model.queue ?? 0;
    const others = model.nodes.filter((n) => n !== nodeName);
    const now =
      inFlight + queued === 0
        ? `No request for it is in flight on ${nodeName} or queued now.`
        : `${requests(inFlight)} for it ${inFlight === 1 ? 'is' : 'are'} in flight on ${nodeName} and ${requests(queued)} queued in the gateway now: the gateway refuses the unload until they are done.`;
    const after =
      others.length > 0
        ? `Its next requests go to ${others.join(', ')}.`
        : `No other node runs it: its next requests wait while ${nodeName} loads it again.`;
    return `Unload '${model.id}' from ${nodeName}? ${now} ${after}`;
  }
  const loaded = node?.loaded ?? [];
  const max = node?.max_instances ?? null;
  if (max !== null && loaded.length >= max)
    return `Load '${model.id}' on ${nodeName}? It runs ${loaded.length} of ${max} models (${loaded.join(', ')}): the gateway first unloads an idle one (not pinned, nothing in flight or queued), and that model's next requests wait for it to load again.`;
  return null;
}

/** The management cells of one model row: desired state, failed loads, and a load or unload button per managing node. */
export function ModelActions({ model, admin, access, onAct, busy }) {
  const row = admin.rows.get(model.id);
  const loaded = model.nodes.filter((n) => admin.managed.has(n));
  const onDemand = [...model.on_demand, ...model.after_wake].filter((n) => admin.managed.has(n));
  // One slot per node, keyed by it: a load turning into an unload keeps the outcome beside it.
  const slots = [...onDemand.map((n) => ['load', n]), ...loaded.map((n) => ['unload', n])].sort(([, a], [, b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  const button = (kind, node) =>
    html`<div class="model-action" key=${node} data-node=${node}><${ActionButton} access=${access} onAct=${onAct} busy=${busy} label=${`${kind} on ${node}`}
      action=${{ kind, path: `models/${kind}`, body: { model: model.id, node }, subject: `${model.id} on ${node}` }}
      refusal=${refusalOf(kind, model.id, node, admin)} confirm=${confirmationOf(kind, model, node, admin)} /></div>`;
  // A load an operator made stands against the reconciler until its hold ends ([models] operator_hold).
  const held = (row?.held ?? []).map(
    (h) =>
      html`<div class="muted held">held ${h.state === 'unloaded' ? 'off' : 'on'} ${T(h.node)} by the operator${h.replica ? html` through replica ${T(h.replica)}` : ''} until ${T(h.until ?? `${Math.round((h.expires_in_ms ?? 0) / 1000)}s from now`)}</div>`,
  );
  return html`<td class="desired">${desiredText(row?.desired)}${held}${(row?.failures ?? []).map((f) => html`<div class="error">load failed on ${T(f.node)}: ${T(f.reason)}</div>`)}</td>
    <td class="model-actions" data-model=${model.id}>${slots.length === 0 ? html`<span class="muted" title="no node serving it manages its models (a llama-server router or Ollama does)">—</span>` : null}
      ${slots.map(([kind, node]) => button(kind, node))}</td>`;
}
