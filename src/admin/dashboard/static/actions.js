// Actions the admin token allows: wake a node, reload the config, load or unload a model. GET access
// says whether this caller may act (and why not): without the right, the buttons are disabled and
// say why. Each action's answer is shown in words in one status line (#action-result).

import { html } from './html.js';
import { useEffect, useState } from 'preact/hooks';
import { tokenHeaders } from './feed.js';
import { T } from './text.js';

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

/** A button for an action: disabled with the reason when this caller may not act, or while it runs. */
export function ActionButton({ access, onAct, label, action, busy, id }) {
  const title = access.act ? undefined : `not allowed: ${access.why}`;
  return html`<button type="button" class="action" id=${id} data-action=${action.kind} disabled=${!access.act || busy} title=${title}
    onClick=${() => onAct(action)}>${label}</button>`;
}

/** The last action's answer (and, without the right to act, why the buttons are off). */
export function ActionResult({ result, access }) {
  return html`<p id="action-result" role="status" class=${result === null ? 'muted' : result.ok ? 'action-ok' : 'action-failed'}>
    ${result === null ? (access.act ? 'Actions: wake, reload, model load and unload.' : html`Actions are off: ${T(access.why)}`) : html`${result.ok ? '✔' : '✕'} ${T(result.text)}`}
  </p>`;
}
