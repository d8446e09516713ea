// Sites view ([mesh]): every pinned remote site — fresh or stale, revision, age of its last record,
// models, load, whether forwarding backs off from it, its last rejected record — and this site's
// own published set. State is an icon and a word as well as a colour, and the row's data-state.
// Only a trust failure (forged, not pinned, over the cap…) is shown as an alarm (red, ⚠); an
// ordering rejection (a start-up race, a replayed older revision) is harmless and shown muted,
// until the gateway ages it out. Each rejection carries data-rejection="trust" or "ordering".
// Ages are shown by the gateway's clock and re-drawn every second (no request is made for that).

import { html } from './html.js';
import { useEffect, useState } from 'preact/hooks';
import { age } from './fleet.js';
import { shown, T } from './text.js';

const SITE_ICONS = { fresh: '●', stale: '◌' };

export function siteBadge(state) {
  return html`<span class="badge site-${state}"><span aria-hidden="true">${SITE_ICONS[state] ?? '?'}</span> ${shown(state)}</span>`;
}

function useSecondTick(active) {
  const [, setTick] = useState(0);
  useEffect(() => {
    if (!active) return undefined;
    const timer = setInterval(() => setTick((n) => n + 1), 1000);
    return () => clearInterval(timer);
  }, [active]);
}

function OwnSite({ own, now }) {
  if (own === null) return null;
  const models = own.models.map(
    (m) => html`${T(m.id)}${m.ctx ? ` (ctx ${m.ctx}${m.on_demand ? ', on demand' : ''})` : m.on_demand ? ' (on demand)' : ''}`,
  );
  const published = own.published_at === null ? 'not yet' : age(Date.parse(own.published_at), now);
  const tail = ` · published ${published} · ${own.peers} gossip peer${own.peers === 1 ? '' : 's'} · publishes ${own.models.length} model${own.models.length === 1 ? '' : 's'}`;
  const listed = models.length > 0 ? [': ', ...models.flatMap((m, i) => (i === 0 ? [m] : [', ', m]))] : null;
  return html`<p id="own-site" data-site=${own.id}>This site: <b>${T(own.id)}</b> <span class="url">${T(own.url)}</span> · revision <span data-field="revision">${own.revision ?? '—'}</span>${tail}${listed}</p>`;
}

function Reachability({ unreachable, now }) {
  if (unreachable === null) return html`<span class="reach-ok" data-reachable="yes">reachable</span>`;
  return html`<span class="reach-down" data-reachable="no"><span aria-hidden="true">⚠</span> unreachable ${age(unreachable.since, now)}: ${T(unreachable.detail)}</span>`;
}

function Rejection({ rejection, now }) {
  const trust = rejection.class === 'trust';
  const said = html`<b>${T(rejection.reason)}</b> ${T(rejection.detail)} <span class="muted">from ${T(rejection.peer)}, ${age(rejection.at, now)}</span>`;
  return trust
    ? html`<span class="rejection-trust" data-rejection="trust"><span aria-hidden="true">⚠</span> trust failure: ${said}</span>`
    : html`<span class="rejection-ordering muted" data-rejection="ordering">ordering, harmless: ${said}</span>`;
}

/** The last-rejection cell: red only for a trust failure; a later ordering rejection is shown beside it, muted. */
function Rejections({ row, now }) {
  const trust = row.last_trust_failure ?? null;
  const last = row.last_rejection;
  const ordering = last !== null && last.class !== 'trust' ? last : null;
  if (trust === null && ordering === null) return html`<td class="no-error muted">—</td>`;
  const shownTrust = trust === null ? null : html`<${Rejection} rejection=${trust} now=${now} />`;
  const shownOrdering = ordering === null ? null : html`<${Rejection} rejection=${ordering} now=${now} />`;
  return html`<td class=${trust === null ? 'no-error' : 'error'}>${shownTrust}${shownTrust !== null && shownOrdering !== null ? html`<br />` : null}${shownOrdering}</td>`;
}

function SiteRow({ row, now }) {
  const load = row.load === null ? '—' : `${row.load.in_flight} in flight · ${row.load.queued} queued · ${row.load.slots} slots`;
  return html`<tr class=${`site site-${row.state}`} data-site=${row.id} data-state=${row.state} data-reachable=${row.unreachable === null ? 'yes' : 'no'}>
    <td class="name">${T(row.id)}</td>
    <td>${siteBadge(row.state)}</td>
    <td class="num">${row.revision ?? '—'}</td>
    <td>${row.record_at === null ? 'no record yet' : age(row.record_at, now)}</td>
    <td class="num">${row.models}</td>
    <td>${load}</td>
    <td><${Reachability} unreachable=${row.unreachable} now=${now} /></td>
    <${Rejections} row=${row} now=${now} />
    <td class="url">${row.url === null || row.url === undefined ? '—' : T(row.url)}</td>
  </tr>`;
}

export function SitesView({ sites }) {
  useSecondTick(sites.mesh);
  if (!sites.mesh) {
    return html`<section id="sites" data-mesh="off">
      <h2>Sites</h2>
      <p class="muted" id="sites-alone">This gateway runs alone (no [mesh] section): no other sites to show.</p>
    </section>`;
  }
  const now = Date.now() + sites.skewMs;
  const rows = sites.order.map((id) => sites.rows.get(id)).filter((row) => row !== undefined);
  const fresh = rows.filter((row) => row.state === 'fresh').length;
  return html`<section id="sites" data-mesh="on">
    <h2>Sites <span class="muted">${fresh} fresh of ${rows.length} pinned</span></h2>
    <${OwnSite} own=${sites.own} now=${now} />
    ${
      rows.length === 0
        ? html`<p class="muted" id="sites-none">No other site is pinned ([[mesh.sites]]).</p>`
        : html`<div class="scroll"><table class="sites">
      <thead><tr><th>site</th><th>state</th><th>revision</th><th>last record</th><th>models</th><th>load</th><th>forwarding</th><th>last rejection</th><th>url</th></tr></thead>
      <tbody>${rows.map((row) => html`<${SiteRow} key=${row.id} row=${row} now=${now} />`)}</tbody>
    </table></div>`
    }
  </section>`;
}
