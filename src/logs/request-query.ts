// Pure: GET /admin/requests' query (limit, after, model, node, tenant, status) read and checked,
// and the filter it means over the ring's records. A bad value is an error naming the parameter.

import type { RequestRecord } from './request-record.ts';

/** Records one answer carries at most (the ring holds REQUEST_RING_SIZE). */
export const MAX_REQUESTS_LIMIT = 1_000;
export const DEFAULT_REQUESTS_LIMIT = 100;

export interface RequestQuery {
  readonly limit: number;
  /** Only records with a larger `seq` (the live view's cursor); 0 = from the oldest kept. */
  readonly after: number;
  /** Exact: the served or requested model. */
  readonly model: string | undefined;
  /** Exact: the node or site that answered, or any attempt's. */
  readonly node: string | undefined;
  readonly tenant: string | undefined;
  /** An exact status (`429`), a class (`2xx` … `5xx`), or `error` (400 and above). */
  readonly status: StatusFilter | undefined;
}

export type StatusFilter = { readonly exact: number } | { readonly class: number } | { readonly error: true };

export type QueryResult = { readonly query: RequestQuery } | { readonly error: string; readonly param: string };

const TEXT_MAX = 256;

export function readRequestQuery(params: URLSearchParams): QueryResult {
  const limitText = params.get('limit');
  const limit = limitText === null || limitText === '' ? DEFAULT_REQUESTS_LIMIT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_REQUESTS_LIMIT)
    return { error: `limit must be a whole number from 1 to ${MAX_REQUESTS_LIMIT}`, param: 'limit' };
  const afterText = params.get('after');
  const after = afterText === null || afterText === '' ? 0 : Number(afterText);
  if (!Number.isSafeInteger(after) || after < 0)
    return { error: 'after must be a whole number (the seq of the last request seen)', param: 'after' };
  const texts: Record<'model' | 'node' | 'tenant', string | undefined> = { model: undefined, node: undefined, tenant: undefined };
  for (const name of ['model', 'node', 'tenant'] as const) {
    const value = params.get(name);
    if (value === null || value === '') continue;
    if (value.length > TEXT_MAX) return { error: `${name} is longer than ${TEXT_MAX} characters`, param: name };
    texts[name] = value;
  }
  const statusText = params.get('status');
  let status: StatusFilter | undefined;
  if (statusText !== null && statusText !== '') {
    const parsed = statusFilter(statusText);
    if (parsed === undefined)
      return { error: "status must be a status (429), a class (2xx, 4xx, 5xx) or 'error'", param: 'status' };
    status = parsed;
  }
  return { query: { limit, after, ...texts, status } };
}

function statusFilter(text: string): StatusFilter | undefined {
  if (text === 'error') return { error: true };
  const cls = /^([1-5])xx$/i.exec(text);
  if (cls !== null) return { class: Number(cls[1]) };
  if (/^[1-5]\d\d$/.test(text)) return { exact: Number(text) };
  return undefined;
}

export function statusMatches(filter: StatusFilter, status: number): boolean {
  if ('exact' in filter) return status === filter.exact;
  if ('class' in filter) return Math.floor(status / 100) === filter.class;
  return status >= 400;
}

export function recordMatches(query: RequestQuery, r: RequestRecord): boolean {
  if (r.seq <= query.after) return false;
  if (query.model !== undefined && r.model !== query.model && r.model_requested !== query.model) return false;
  if (query.tenant !== undefined && r.tenant !== query.tenant) return false;
  if (query.status !== undefined && !statusMatches(query.status, r.status)) return false;
  if (query.node !== undefined) {
    const node = query.node;
    if (r.node !== node && r.site !== node && !r.attempts.some((a) => a.node === node || a.site === node)) return false;
  }
  return true;
}
