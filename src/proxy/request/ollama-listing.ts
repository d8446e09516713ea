// Pure: Ollama's `GET /api/tags` and `GET /api/ps` for the whole fleet, answered by the gateway from
// what it knows (docs/protocols-endpoints.md, "Ollama's native API"): every model of every node that
// serves Ollama's native API (`/api/chat` in its endpoint set) and serves it now (servingNow, as
// /v1/models reads it), and those loaded now. The shapes are
// Ollama's own (api/types.go `ListModelResponse`, `ProcessModelResponse`); what the gateway does not
// learn from a node's listing is filled the way Ollama fills an unknown value: `size` 0, `digest`
// "", empty `details` strings, and Go's zero time for `expires_at`.

import { ctxFor } from '#src/capacity/index.ts';
import { OLLAMA_API_VERSION, servedEndpoints } from '#src/kinds/index.ts';
import { servingNow, type NodeView } from '#src/nodes/index.ts';

/** The kind's paths and refused routes, for the route table (proxy/inference reaches kinds/ through here). */
export { OLLAMA_LISTING_PATHS, OLLAMA_MANAGEMENT_ROUTES, OLLAMA_ROOT } from '#src/kinds/index.ts';

/** `GET /api/version`: the Ollama release the gateway's routes were checked against (kinds/ollama-api.ts). */
export function ollamaVersion(): { version: string } {
  return { version: OLLAMA_API_VERSION };
}

/** Go's zero `time.Time` as JSON: what Ollama writes for a time it does not have. */
export const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

const EMPTY_DETAILS = {
  parent_model: '',
  format: '',
  family: '',
  families: [],
  parameter_size: '',
  quantization_level: '',
} as const;

export interface OllamaTag {
  readonly name: string;
  readonly model: string;
  readonly modified_at: string;
  readonly size: number;
  readonly digest: string;
  readonly details: typeof EMPTY_DETAILS;
  /** A model only a remote site serves ([mesh]): marked as Ollama marks a remote model (`remote_host`, `remote_model`). */
  readonly remote_host?: string;
  readonly remote_model?: string;
}

/** A model a fresh remote site serves, and the site (the first by id). */
export interface RemoteTag {
  readonly id: string;
  readonly site: string;
}

export interface OllamaRunning {
  readonly name: string;
  readonly model: string;
  readonly size: number;
  readonly digest: string;
  readonly details: typeof EMPTY_DETAILS;
  readonly expires_at: string;
  readonly size_vram: number;
  readonly context_length: number;
}

/** The nodes whose endpoint set serves Ollama's native chat (which of their models they serve now: servedIds). */
function ollamaNodes(views: readonly NodeView[]): NodeView[] {
  return views.filter((v) => servedEndpoints(v.spec, v.capacity.server).includes('/api/chat'));
}

/** Each served model's id, once, sorted, with the nodes listing it; `visible` = the tenant's scope. */
function servedIds(nodes: readonly NodeView[], visible: ((model: string) => boolean) | undefined): Map<string, NodeView[]> {
  const byId = new Map<string, NodeView[]>();
  for (const v of nodes) {
    for (const m of v.discovery.models) {
      if (servingNow(v, m.id) === undefined) continue;
      if (visible !== undefined && !visible(m.id)) continue;
      byId.set(m.id, [...(byId.get(m.id) ?? []), v]);
    }
  }
  return new Map([...byId].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * `GET /api/tags`: `modified_at` is when the gateway answers (as /v1/models' `created`). `remote`:
 * the models of fresh remote sites (`remote(localIds)` leaves out those served here), each marked
 * `remote_host: "switchyard:<site>"`, `remote_model: <id>`, after the local ones.
 */
export function ollamaTags(
  views: readonly NodeView[],
  visible: ((model: string) => boolean) | undefined,
  nowMs: number,
  remote: (localIds: readonly { readonly id: string }[]) => readonly RemoteTag[] = () => [],
): { models: OllamaTag[] } {
  const modifiedAt = new Date(nowMs).toISOString();
  const ids = [...servedIds(ollamaNodes(views), visible).keys()];
  const tag = (id: string): OllamaTag => ({
    name: id,
    model: id,
    modified_at: modifiedAt,
    size: 0,
    digest: '',
    details: EMPTY_DETAILS,
  });
  const remoteTags = remote(ids.map((id) => ({ id })))
    .filter((m) => visible === undefined || visible(m.id))
    .map((m): OllamaTag => ({ ...tag(m.id), remote_host: `switchyard:${m.site}`, remote_model: m.id }));
  return { models: [...ids.map(tag), ...remoteTags] };
}

/** `GET /api/ps`: the models loaded on some node now; `context_length` the largest such node's runtime context. */
export function ollamaPs(
  views: readonly NodeView[],
  visible: ((model: string) => boolean) | undefined,
): { models: OllamaRunning[] } {
  const models: OllamaRunning[] = [];
  for (const [id, nodes] of servedIds(ollamaNodes(views), visible)) {
    const loaded = nodes.filter((v) => servingNow(v, id)?.how === 'loaded');
    if (loaded.length === 0) continue;
    const context = Math.max(0, ...loaded.map((v) => ctxFor(v, id)));
    models.push({
      name: id,
      model: id,
      size: 0,
      digest: '',
      details: EMPTY_DETAILS,
      expires_at: GO_ZERO_TIME,
      size_vram: 0,
      context_length: context,
    });
  }
  return { models };
}
