// Batches view: the feed's `batches` (GET /admin/batches' view, src/batch/batch-view.ts, sent when it
// changes) — every tenant's latest batch jobs (docs/batch.md), newest first: status, lines answered
// of the total, failed, retried (sent again after a crash: the node never answered), waiting and in
// flight, the rate since the job started and the time left at that rate. A job still running has a
// cancel button (off, with why, while the cancel is under way) (POST batches/{id}/cancel, the admin's cancel of any tenant's job, through the same
// action path as every admin action: actions.js); it asks first. Without the batch feature (no
// [server] state_dir) the view says what to set.

import { html } from './html.js';
import { useErrorBoundary } from 'preact/hooks';
import { T } from './text.js';
import { ActionButton } from './actions.js';

const figures = new Intl.NumberFormat('en-US');
const n = (value) => (typeof value === 'number' && Number.isFinite(value) ? figures.format(value) : '?');

/** Seconds as "1 h 02 min", "3 min 05 s", "42 s"; "—" when unknown. */
export function duration(seconds) {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) return '—';
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/** A job the operator may cancel; while one is cancelling its button stays (off, with why), so the outcome stays beside it. */
const CANCELLABLE = new Set(['validating', 'in_progress']);
const CANCELLING = {
  short: 'cancelling',
  why: 'the cancel is under way: no new line starts, the lines in flight finish, then it ends cancelled',
};

function BatchRow({ b, access, onAct, busy }) {
  const answered = (b.completed ?? 0) + (b.failed ?? 0);
  const percent = typeof b.total === 'number' && b.total > 0 ? Math.floor((answered / b.total) * 100) : 0;
  return html`<tr class="batch" data-batch=${b.id} data-status=${b.status}>
    <td class="name">${T(b.id)}</td>
    <td data-field="tenant">${T(b.tenant)}</td>
    <td data-field="status"><span class=${`badge batch-${b.status}`}>${T(b.status)}</span></td>
    <td data-field="endpoint">${T(b.endpoint)}</td>
    <td class="num" data-field="progress"><progress max="100" value=${percent} aria-label=${`${percent}% answered`}></progress> ${n(answered)} / ${n(b.total)}</td>
    <td class="num" data-field="completed">${n(b.completed)}</td>
    <td class="num" data-field="failed">${n(b.failed)}</td>
    <td class="num" data-field="retried">${n(b.retried)}</td>
    <td class="num" data-field="waiting">${n(b.waiting)}</td>
    <td class="num" data-field="in-flight">${n(b.in_flight)}</td>
    <td class="num" data-field="rate">${b.lines_per_second === null ? '—' : `${n(b.lines_per_second)}/s`}</td>
    <td class="num" data-field="eta">${duration(b.eta_seconds)}</td>
    <td data-field="expires" title="the completion window ends (UTC)">${T(
      String(b.expires_at ?? '')
        .replace('T', ' ')
        .slice(0, 19),
    )}</td>
    <td class="batch-actions">${
      CANCELLABLE.has(b.status) || b.status === 'cancelling'
        ? html`<${ActionButton} access=${access} onAct=${onAct} busy=${busy} label="cancel job"
            action=${{ kind: 'cancel', path: `batches/${encodeURIComponent(b.id)}/cancel`, subject: b.id }}
            refusal=${b.status === 'cancelling' ? CANCELLING : null}
            confirm=${`Cancel ${b.id} (tenant ${b.tenant})? Its ${n(b.waiting)} waiting lines fail at once (batch_cancelled); the ${n(b.in_flight)} in flight finish, and it ends cancelled with its partial output.`} />`
        : null
    }</td>
  </tr>`;
}

function BatchesPanel({ batches, access, onAct, busy }) {
  if (batches === undefined) return html`<section id="batches" data-state="loading" hidden></section>`;
  if (batches === null) {
    return html`<section id="batches" data-state="unserved">
      <h2>Batches</h2>
      <p class="muted" id="batches-empty" role="status">No batch jobs here: the Files and Batch API keeps its files and jobs in <code>[server] state_dir</code>, which is not set. Set it (e.g. <code>state_dir = "/var/lib/switchyard"</code>) and restart the gateway to serve <code>/v1/files</code> and <code>/v1/batches</code> (docs/batch.md).</p>
    </section>`;
  }
  if (typeof batches.error === 'string' || !Array.isArray(batches.batches)) {
    return html`<section id="batches" data-state="error">
      <h2>Batches</h2>
      <p class="error" id="batches-error" role="status">${T(batches.error ?? 'the batches view has no "batches" list')}</p>
    </section>`;
  }
  const rows = batches.batches;
  if (rows.length === 0) {
    return html`<section id="batches" data-state="none">
      <h2>Batches</h2>
      <p class="muted" id="batches-empty" role="status">${typeof batches.unavailable === 'string' ? T(batches.unavailable) : 'No batch jobs yet: a client creates one with POST /v1/files and POST /v1/batches (docs/batch.md).'}</p>
    </section>`;
  }
  return html`<section id="batches" data-state="ok">
    <h2>Batches <span class="muted">${rows.length}</span></h2>
    ${typeof batches.unavailable === 'string' ? html`<p class="error" id="batches-unavailable">${T(batches.unavailable)}</p>` : null}
    <div class="scroll"><table class="batches">
      <thead><tr><th>batch</th><th>tenant</th><th>status</th><th>endpoint</th><th class="num">answered</th>
        <th class="num">completed</th><th class="num">failed</th><th class="num" title="sent again after a crash: the node had not answered">retried</th>
        <th class="num">waiting</th><th class="num">in flight</th><th class="num" title="lines answered per second since the job started">rate</th>
        <th class="num" title="time left at that rate">ETA</th><th>window ends</th><th></th></tr></thead>
      <tbody>${rows.map((b) => html`<${BatchRow} key=${b.id} b=${b} access=${access} onAct=${onAct} busy=${busy} />`)}</tbody>
    </table></div>
  </section>`;
}

/** The view, fenced: an answer it cannot draw shows as its own error, and the other views stay. */
export function BatchesView(props) {
  const [error] = useErrorBoundary();
  if (error) {
    return html`<section id="batches" data-state="error">
      <h2>Batches</h2>
      <p class="error" id="batches-error" role="status">the Batches view could not show the answer: ${T(error?.message ?? error)}</p>
    </section>`;
  }
  return html`<${BatchesPanel} ...${props} />`;
}
