// Pure: the model listing in Anthropic's shape, for a client that speaks Anthropic's API (it sends
// `anthropic-version`, as the Anthropic SDK and Claude Code do): `GET /v1/models` →
// `{data:[{type:"model", id, display_name, created_at, …}], has_more, first_id, last_id}` paged by
// `limit` (default 20, 1–1000), `after_id` and `before_id` as Anthropic documents; `GET
// /v1/models/{id}` → one model object. Built from the same fleet list (and the same caller scope)
// as the OpenAI listing (models-list.ts). The list is in id order, and a cursor is an id compared
// in that order: a page after a model that has since gone still starts where it would have been.

import { badRequest, type GatewayError } from '#src/core/errors.ts';
import type { FleetModel } from './models-list.ts';

/** The header every Anthropic client sends; with it, the listings answer in Anthropic's shape. */
export const ANTHROPIC_VERSION_HEADER = 'anthropic-version';

/** Whether the request asks for Anthropic's shape (it carries `anthropic-version`). */
export function wantsAnthropicShape(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  return headers[ANTHROPIC_VERSION_HEADER] !== undefined;
}

export const DEFAULT_PAGE_LIMIT = 20;
export const MAX_PAGE_LIMIT = 1000;

/** One model as Anthropic's Models API shows it (the SDK's `ModelInfo`); what the gateway cannot know is null. */
export interface AnthropicModel {
  readonly type: 'model';
  readonly id: string;
  readonly display_name: string;
  /** RFC 3339: when the gateway first listed it this answer (the fleet list's `created`). */
  readonly created_at: string;
  /** The largest context among the nodes that have it loaded (the OpenAI listing's `max_model_len`); null when none has. */
  readonly max_input_tokens: number | null;
  readonly max_tokens: null;
  readonly capabilities: null;
  readonly lifecycle: 'active';
  readonly deprecated_at: null;
  readonly retires_at: null;
  readonly line: null;
}

export interface AnthropicModelPage {
  readonly data: readonly AnthropicModel[];
  readonly has_more: boolean;
  readonly first_id: string | null;
  readonly last_id: string | null;
}

export function anthropicModel(entry: FleetModel): AnthropicModel {
  return {
    type: 'model',
    id: entry.id,
    display_name: entry.id,
    created_at: new Date(entry.created * 1000).toISOString(),
    max_input_tokens: entry.max_model_len,
    max_tokens: null,
    capabilities: null,
    lifecycle: 'active',
    deprecated_at: null,
    retires_at: null,
    line: null,
  };
}

/** What a listing query asks: a page of `limit` after or before an id. */
export interface PageQuery {
  readonly limit: number;
  readonly afterId: string | undefined;
  readonly beforeId: string | undefined;
}

/** The query's paging parameters, or why they are refused (400, naming the parameter). */
export function pageQuery(params: URLSearchParams): PageQuery | GatewayError {
  const rawLimit = params.get('limit');
  let limit = DEFAULT_PAGE_LIMIT;
  if (rawLimit !== null) {
    limit = /^\d{1,7}$/.test(rawLimit) ? Number(rawLimit) : Number.NaN;
    if (!(limit >= 1 && limit <= MAX_PAGE_LIMIT))
      return badRequest(`limit: must be a whole number from 1 to ${MAX_PAGE_LIMIT} (got ${JSON.stringify(rawLimit)})`, 'limit');
  }
  const afterId = params.get('after_id') ?? undefined;
  const beforeId = params.get('before_id') ?? undefined;
  if (afterId !== undefined && beforeId !== undefined)
    return badRequest('after_id and before_id: give at most one of them (a page is after one id or before one)', 'after_id');
  return { limit, afterId, beforeId };
}

const byId = (a: FleetModel, b: FleetModel): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * One page of `list` (the caller's models): the first `limit` after `afterId`, the last `limit`
 * before `beforeId`, else the first `limit`; `has_more` says whether more lie beyond the page in
 * the direction paged (after: later ids; before: earlier ids), as Anthropic's cursors do.
 */
export function anthropicPage(list: readonly FleetModel[], query: PageQuery): AnthropicModelPage {
  const sorted = [...list].sort(byId);
  let page: FleetModel[];
  let hasMore: boolean;
  const { afterId, beforeId, limit } = query;
  if (beforeId !== undefined) {
    const before = sorted.filter((m) => m.id < beforeId);
    page = before.slice(Math.max(0, before.length - limit));
    hasMore = before.length > limit;
  } else {
    const after = afterId === undefined ? sorted : sorted.filter((m) => m.id > afterId);
    page = after.slice(0, limit);
    hasMore = after.length > limit;
  }
  const data = page.map(anthropicModel);
  return { data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
