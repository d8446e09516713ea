// Actions the admin token allows: wake a node, reload the config, load or unload a model, cancel a batch job. GET access
// says whether this caller may act (and why not): without the right, the buttons are disabled and
// say why (and one line at the top, #action-result, says it once). Each action's answer is shown in
// words beside its own button; one that interrupts users asks first.

import { html } from './html.js';
import { useEffect, useState } from 'preact/hooks';
import { tokenHeaders } from './feed.js';
import { T, utcTime } from './text.js';

const ANSWER_TIMEOUT_MS = 60_000;

/** { act: boolean, why?: string } for this token; act is false (with why) until the gateway says. */
export function useAccess(token) {
  const [access, setAccess] = useState({ act: false, why: 'asking the gateway whether this page may act…' });
  useEffect(() => {
    const stop = new AbortController();
    fetch('access', { headers: tokenHeaders(token), cache: 'no-store', signal: stop.signal })
      .then(async (res) => {
        const body = await res.json().catch(() => null);
        if (res.ok && typeof body?.act === 'boolean')
          setAccess(body.act ? { act: true } : { act: false, why: String(body.why ?? 'not allowed') });
        else setAccess({ act: false, why: body?.error?.message ?? `GET /admin/access answered ${res.status}` });
      })
      .catch((error) => {
        if (!stop.signal.aborted) setAccess({ act: false, why: `GET /admin/access failed: ${error?.message ?? error}` });
      });
    return () => stop.abort();
  }, [token]);
  return access;
}

const WAKE_WORDS = {
  sent: 'wake sent',
  in_window: 'a wake was sent already; waiting for it to come up',
  failed: 'the wake could not be sent',
  not_wakeable: 'the node has no [nodes.wake] configured',
  unknown_node: 'no such node',
};

/** The answer in words: { ok, text }. */
export function describeAnswer(kind, status, body, subject) {
  const error = body?.error?.message;
  if (error !== undefined) return { ok: false, text: `${subject}: ${error} (${status})` };
  if (kind === 'wake')
    return { ok: status < 300, text: `wake ${subject}: ${WAKE_WORDS[body?.result] ?? body?.result ?? 'no answer'} (${status})` };
  if (kind === 'reload') {
    if (body?.status === 'reloaded') return { ok: true, text: 'config reloaded' };
    return { ok: false, text: `reload rejected: ${(body?.problems ?? []).join('; ') || `status ${status}`}` };
  }
  if (kind === 'cancel') {
    if (status >= 300) return { ok: false, text: `cancel ${subject}: status ${status}` };
    return { ok: true, text: `${subject}: ${body?.status ?? 'cancelling'}` };
  }
  const where = body?.node ? ` on ${body.node}` : '';
  return {
    ok: body?.outcome === 'done' || body?.outcome === 'already',
    text: `${body?.outcome ?? 'no answer'}: ${body?.action ?? kind} ${body?.model ?? subject}${where}${body?.detail ? ` — ${body.detail}` : ''} (${status})`,
  };
}

/** Runs one action; resolves to { ok, text } (never throws). */
export async function runAction(token, { kind, method = 'POST', path, body, subject }) {
  try {
    const res = await fetch(path, {
      method,
      headers: { ...tokenHeaders(token), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
    });
    const parsed = await res.json().catch(() => null);
    return describeAnswer(kind, res.status, parsed, subject);
  } catch (error) {
    return { ok: false, text: `${subject}: ${error?.message ?? error}` };
  }
}

/**
 * A button for an action, with its own outcome beside it. Disabled, with the reason as its title,
 * when this caller may not act, or when the gateway is known to refuse it (`refusal`: { short, why }
 * — a pinned model, a switch under way — shown beside it too); while any action runs (`busy`). An
 * action that interrupts users (`confirm`: the words) asks first, beside the button. `onAct(action)`
 * resolves to the answer { ok, text }, written beside the button with the time it came (UTC).
 */
export function ActionButton({ access, onAct, label, action, busy, id, refusal = null, confirm = null }) {
  const [asking, setAsking] = useState(false);
  const [sending, setSending] = useState(false);
  const [outcome, setOutcome] = useState(null);
  const off = !access.act ? `not allowed: ${access.why}` : refusal === null ? undefined : refusal.why;
  const act = async () => {
    setAsking(false);
    setSending(true);
    setOutcome({ ok: true, text: `${action.kind} ${action.subject ?? ''}: sent, waiting for the answer…`, pending: true });
    const answer = await onAct(action);
    setSending(false);
    setOutcome({ ...answer, at: Date.now() });
  };
  const click = () => (confirm === null ? act() : setAsking(true));
  return html`<span class="action-slot" data-action=${action.kind} data-subject=${action.subject}>
    <button type="button" class="action" id=${id} data-action=${action.kind} disabled=${off !== undefined || busy || sending || asking}
      title=${off} aria-describedby=${id ? `${id}-outcome` : undefined} onClick=${click}>${label}</button>
    ${access.act && refusal !== null ? html`<span class="action-off muted" data-reason=${refusal.short}>${T(refusal.short)}</span>` : null}
    ${
      asking
        ? html`<span class="action-confirm" role="alertdialog" aria-label=${`confirm ${label}`}>${T(confirm)}
        <button type="button" class="action" data-confirm="yes" onClick=${act}>${label}</button>
        <button type="button" class="action" data-confirm="no" onClick=${() => setAsking(false)}>cancel</button></span>`
        : null
    }
    ${
      outcome === null
        ? null
        : html`<span id=${id ? `${id}-outcome` : undefined} class=${`action-outcome ${outcome.pending ? 'muted' : outcome.ok ? 'action-ok' : 'action-failed'}`}
        role="status" data-ok=${outcome.pending ? 'pending' : outcome.ok ? 'yes' : 'no'}>${outcome.pending ? '…' : outcome.ok ? '✔' : '✕'} ${T(outcome.text)}${outcome.at ? html` <span class="muted">${utcTime(outcome.at)}</span>` : null}</span>`
    }
  </span>`;
}

/** Without the right to act: why every action button is off (each outcome shows beside its button). */
export function ActionResult({ access }) {
  return html`<p id="action-result" role="status" class="muted">
    ${access.act ? 'Actions: wake, reload, model load and unload, batch cancel; each answer shows beside its button.' : html`Actions are off: ${T(access.why)}`}
  </p>`;
}
