// Untrusted text on the page. Node names, model ids, URLs, errors and site ids are chosen by nodes
// and peers: each is shown isolated (<bdi>, so its direction cannot reorder what is around it) and
// with every control and bidi character made visible (visible-text.js, the one the CLI uses), so a
// right-to-left override cannot make an id read backwards.

import { html } from './html.js';
import { visibleText } from './visible-text.js';

/** The text to show for a value, as a string, controls and bidi characters visible. */
export function shown(value) {
  return visibleText(String(value ?? ''));
}

/** One untrusted string, isolated. */
export function T(value) {
  return html`<bdi class="untrusted">${shown(value)}</bdi>`;
}

/** Untrusted strings, each isolated, between separators; `empty` when there are none. */
export function list(values, empty = '—', separator = ', ') {
  if (values.length === 0) return empty;
  return values.flatMap((value, i) => (i === 0 ? [T(value)] : [separator, T(value)]));
}

/**
 * Every time on the page is UTC, as the request log writes it: `HH:MM:SS` (with `.mmm` when asked),
 * the header says so once.
 */
export function utcTime(ms, millis = false) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '';
  const iso = new Date(ms).toISOString();
  return millis ? iso.slice(11, 23) : iso.slice(11, 19);
}

/** An ISO-8601 UTC text (the request log's `time`) as `HH:MM:SS.mmm`. */
export function utcOf(iso) {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? utcTime(ms, true) : shown(iso);
}
