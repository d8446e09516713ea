// Pure: a `GET /v1/models` JSON body → the node's model list, or a message saying what is wrong.
//
// Every supported server answers the OpenAI shape `{ object: "list", data: [...] }`; the kinds
// differ only in extra fields (llama.cpp `status`/`meta`/`aliases`, vLLM/SGLang `max_model_len`)
// that never collide, so all fields are read for every kind. A kind's quirks (Ollama's `"data":
// null`) are undone by its module in src/kinds/ before the list is read.

import type { NodeKind } from '#src/config/types.ts';
import { kvModeFromArgs, routerArgsOf, serverKind } from '#src/kinds/index.ts';
import type { DiscoveredModel } from './discovered-model.ts';
import { isRecord } from '#src/core/is-record.ts';

export type ParseOutcome =
  | { readonly ok: true; readonly models: readonly DiscoveredModel[] }
  | { readonly ok: false; readonly error: string };

type EntryOutcome = { readonly ok: true; readonly model: DiscoveredModel } | { readonly ok: false; readonly error: string };

/** Longest piece of an upstream error message quoted back in our own message. */
const QUOTED_MESSAGE_CHARS = 200;

export function parseModelList(kind: NodeKind, raw: unknown): ParseOutcome {
  const body = serverKind(kind).normalizeListing(raw);
  if (!isRecord(body)) return { ok: false, error: `model list is not a JSON object (got ${describeJson(body)})` };
  const data = body['data'];
  if (!Array.isArray(data)) {
    const upstream = upstreamErrorMessage(body);
    const problem = data === undefined ? "model list has no 'data' field" : `model list 'data' is ${describeJson(data)}, not an array`;
    return { ok: false, error: upstream === undefined ? problem : `${problem} (node error: ${upstream})` };
  }
  const models: DiscoveredModel[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of data.entries()) {
    const outcome = parseEntry(entry, index);
    if (!outcome.ok) return outcome;
    // A duplicate id adds nothing a request could address differently: the first entry wins.
    if (seen.has(outcome.model.id)) continue;
    seen.add(outcome.model.id);
    models.push(outcome.model);
  }
  return { ok: true, models };
}

function parseEntry(entry: unknown, index: number): EntryOutcome {
  if (!isRecord(entry)) return { ok: false, error: `model list entry ${index} is ${describeJson(entry)}, not an object` };
  const id = entry['id'];
  if (typeof id !== 'string' || id === '') {
    return { ok: false, error: `model list entry ${index} has no non-empty string 'id'` };
  }
  const status = routerStatus(entry['status']);
  const args = routerArgsOf(entry['status']);
  const kv = args === undefined ? undefined : kvModeFromArgs(args);
  return {
    ok: true,
    model: {
      id,
      // No status object means a single-model server or a non-llama.cpp kind: always ready.
      loaded: status.present ? status.value === 'loaded' : true,
      status: status.value,
      contextTokens: contextTokensOf(entry),
      aliases: aliasesOf(entry['aliases'], id),
      ...(kv === undefined ? {} : { kv }),
    },
  };
}

function routerStatus(raw: unknown): { present: boolean; value: string | undefined } {
  if (raw === undefined || raw === null) return { present: false, value: undefined };
  const value = isRecord(raw) ? raw['value'] : undefined;
  return { present: true, value: typeof value === 'string' ? value : undefined };
}

function contextTokensOf(entry: Readonly<Record<string, unknown>>): number | undefined {
  const maxModelLen = entry['max_model_len'];
  if (isPositiveNumber(maxModelLen)) return maxModelLen;
  const meta = entry['meta'];
  const nCtx = isRecord(meta) ? meta['n_ctx'] : undefined;
  return isPositiveNumber(nCtx) ? nCtx : undefined;
}

function aliasesOf(raw: unknown, id: string): string[] {
  if (!Array.isArray(raw)) return [];
  const aliases = new Set<string>();
  for (const alias of raw) {
    if (typeof alias === 'string' && alias !== '' && alias !== id) aliases.add(alias);
  }
  return [...aliases];
}

/** The message of an error object some servers send with HTTP 200 (`{error:{message}}` or flat). */
function upstreamErrorMessage(body: Readonly<Record<string, unknown>>): string | undefined {
  const error = body['error'];
  const message = isRecord(error) ? error['message'] : typeof error === 'string' ? error : body['message'];
  return typeof message === 'string' ? message.slice(0, QUOTED_MESSAGE_CHARS) : undefined;
}

function isPositiveNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
