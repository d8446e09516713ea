// Pure: a `GET /v1/models` JSON body → the node's model list, or a message saying what is wrong.
//
// Every supported server answers the OpenAI shape `{ object: "list", data: [...] }`; the kinds
// differ in their quirks (Ollama's `"data": null`, undone by `normalizeListing`) and in the extra
// fields of an entry, which the kind reads (`listingEntry`). This file checks the shape and the ids.

import type { NodeKind } from '#src/config/types.ts';
import { serverKind, type ListedEntry, type ServerKind } from '#src/kinds/index.ts';
import type { DiscoveredModel } from './discovered-model.ts';
import { isRecord } from '#src/core/is-record.ts';

export type ParseOutcome =
  { readonly ok: true; readonly models: readonly DiscoveredModel[] } | { readonly ok: false; readonly error: string };

type EntryOutcome = { readonly ok: true; readonly model: DiscoveredModel } | { readonly ok: false; readonly error: string };

/** Longest piece of an upstream error message quoted back in our own message. */
const QUOTED_MESSAGE_CHARS = 200;

export function parseModelList(kind: NodeKind, raw: unknown): ParseOutcome {
  const server = serverKind(kind);
  const body = server.normalizeListing(raw);
  if (!isRecord(body)) return { ok: false, error: `model list is not a JSON object (got ${describeJson(body)})` };
  const data = body['data'];
  if (!Array.isArray(data)) {
    const upstream = upstreamErrorMessage(body);
    const problem =
      data === undefined ? "model list has no 'data' field" : `model list 'data' is ${describeJson(data)}, not an array`;
    return { ok: false, error: upstream === undefined ? problem : `${problem} (node error: ${upstream})` };
  }
  const models: DiscoveredModel[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of data.entries()) {
    const outcome = parseEntry(server, entry, index);
    if (!outcome.ok) return outcome;
    // A duplicate id adds nothing a request could address differently: the first entry wins.
    if (seen.has(outcome.model.id)) continue;
    seen.add(outcome.model.id);
    models.push(outcome.model);
  }
  return { ok: true, models };
}

function parseEntry(server: ServerKind, entry: unknown, index: number): EntryOutcome {
  if (!isRecord(entry)) return { ok: false, error: `model list entry ${index} is ${describeJson(entry)}, not an object` };
  const id = entry['id'];
  if (typeof id !== 'string' || id === '') {
    return { ok: false, error: `model list entry ${index} has no non-empty string 'id'` };
  }
  // Frozen here, so the registry stores this very object (nodes/frozen-discovery.ts) and the listing
  // cache's result and the stored listing are one copy, not two (1,000 nodes × 50 models).
  return { ok: true, model: Object.freeze(modelRecord(id, server.listingEntry(entry, id))) };
}

/**
 * One literal with every field, so that all of them sit in the object itself: `{ id, ...entry }`
 * added the entry's fields one by one past the literal's room and put three of them in a separate
 * property array (80 → 64 bytes a model, 50,000 of them at 1,000 nodes × 50; issue 28).
 */
function modelRecord(id: string, entry: ListedEntry): DiscoveredModel {
  const { loaded, status, contextTokens, aliases, kv, exitCode } = entry;
  // A failed child is rare: its exit code rides on a copy, so every other entry keeps its one literal.
  if (exitCode !== undefined)
    return { id, loaded, status, contextTokens, aliases, ...(kv === undefined ? {} : { kv }), exitCode };
  return kv === undefined ? { id, loaded, status, contextTokens, aliases } : { id, loaded, status, contextTokens, aliases, kv };
}

/** The message of an error object some servers send with HTTP 200 (`{error:{message}}` or flat). */
function upstreamErrorMessage(body: Readonly<Record<string, unknown>>): string | undefined {
  const error = body['error'];
  const message = isRecord(error) ? error['message'] : typeof error === 'string' ? error : body['message'];
  return typeof message === 'string' ? message.slice(0, QUOTED_MESSAGE_CHARS) : undefined;
}

function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
