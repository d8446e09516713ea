// Pure: the list-then-watch protocol of the Kubernetes API over one Service's EndpointSlices. A
// list answers the slices and the resourceVersion to watch from (page by page: `metadata.continue`);
// each watch event moves the set on (ADDED / MODIFIED / DELETED), a BOOKMARK only moves the
// resourceVersion, and an ERROR event carrying 410 (the version is too old for the server's window)
// asks for a relist. Anything not of the protocol's shape is an error with its reason; the caller
// keeps its last good set then.

import { isRecord } from '#src/core/is-record.ts';
import type { EndpointSlice, ListPage } from './k8s-api.ts';
import { readSlice } from './k8s-slices.ts';

export type { ListPage } from './k8s-api.ts';

export interface SliceSet {
  readonly resourceVersion: string;
  readonly slices: ReadonlyMap<string, EndpointSlice>;
}

export type WatchStep =
  | { readonly kind: 'set'; readonly set: SliceSet; readonly changed: boolean }
  | { readonly kind: 'relist'; readonly reason: string }
  | { readonly kind: 'error'; readonly reason: string };

/** An EndpointSliceList page. */
export function readListPage(body: unknown): ListPage {
  if (!isRecord(body) || !Array.isArray(body['items']))
    return { ok: false, reason: 'the list answer is not an EndpointSliceList', gone: false };
  const metadata = isRecord(body['metadata']) ? body['metadata'] : {};
  const resourceVersion = metadata['resourceVersion'];
  if (typeof resourceVersion !== 'string' || resourceVersion === '')
    return { ok: false, reason: 'the list answer carries no metadata.resourceVersion', gone: false };
  const slices: EndpointSlice[] = [];
  for (const item of body['items'] as unknown[]) {
    const read = readSlice(item);
    if (!read.ok) return { ok: false, reason: read.reason, gone: false };
    slices.push(read.value);
  }
  const next = metadata['continue'];
  return { ok: true, slices, resourceVersion, continue: typeof next === 'string' && next !== '' ? next : undefined };
}

/** Every page's slices as one set, at the last page's resourceVersion (the list's snapshot). */
export function setFromPages(pages: readonly (ListPage & { ok: true })[]): SliceSet {
  const slices = new Map<string, EndpointSlice>();
  for (const page of pages) for (const slice of page.slices) slices.set(slice.name, slice);
  return { resourceVersion: pages[pages.length - 1]?.resourceVersion ?? '', slices };
}

/** A Status object's words: "410 Expired: too old resource version: 5 (10)". */
export function statusText(object: unknown): string {
  if (!isRecord(object)) return 'an error without a Status';
  const code = typeof object['code'] === 'number' ? `${object['code']} ` : '';
  const reason = typeof object['reason'] === 'string' ? object['reason'] : 'error';
  const message = typeof object['message'] === 'string' ? `: ${object['message'].slice(0, 300)}` : '';
  return `${code}${reason}${message}`;
}

/** One watch event applied to the set. */
export function applyWatchEvent(set: SliceSet, event: unknown): WatchStep {
  if (!isRecord(event) || typeof event['type'] !== 'string') return { kind: 'error', reason: 'a watch event without a type' };
  const type = event['type'];
  const object = event['object'];
  if (type === 'ERROR') {
    const code = isRecord(object) ? object['code'] : undefined;
    if (code === 410) return { kind: 'relist', reason: `the watch answered ${statusText(object)}` };
    return { kind: 'error', reason: `the watch answered ${statusText(object)}` };
  }
  const metadata = isRecord(object) && isRecord(object['metadata']) ? object['metadata'] : {};
  const version = metadata['resourceVersion'];
  if (typeof version !== 'string' || version === '')
    return { kind: 'error', reason: `a ${type} event without metadata.resourceVersion` };
  if (type === 'BOOKMARK') return { kind: 'set', set: { resourceVersion: version, slices: set.slices }, changed: false };
  if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED')
    return { kind: 'error', reason: `an unknown watch event type ${JSON.stringify(type.slice(0, 40))}` };
  const read = readSlice(object);
  if (!read.ok) return { kind: 'error', reason: read.reason };
  const slices = new Map(set.slices);
  if (type === 'DELETED') slices.delete(read.value.name);
  else slices.set(read.value.name, read.value);
  return { kind: 'set', set: { resourceVersion: version, slices }, changed: true };
}
