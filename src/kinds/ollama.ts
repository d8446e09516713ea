// Ollama (PROTOCOLS.md §3): healthy when `/api/version` answers (it has no /health), an empty
// listing encoded as `"data": null` (a nil Go slice), and `/api/ps` for what is loaded now.

import { isRecord } from '#src/core/is-record.ts';
import { LISTING_PATH, okBody } from './detection.ts';
import { positiveInt } from './json-fields.ts';
import { readRefusal, type RefusalDialect } from './refusal.ts';
import type { CapacityDialect, KindDetector, ModelContext, ServerKind } from './server-kind.ts';
import { ollamaName } from './model-names.ts';
import { poolWhenLlamaServer } from './kv-pool.ts';
import { NO_LOAD_PATHS } from './load-paths.ts';
import { readListingEntry } from './listing-entry.ts';
import { ASKED_NO_NULLS } from './stream-usage.ts';
import { OLLAMA_ENDPOINTS } from './endpoint-sets.ts';
import { ollamaModelOps } from './model-ops.ts';

/** Pure: GET /api/ps → the loaded models and their runtime context_length. */
export function parseOllamaPs(body: unknown): { loadedIds: string[]; models: Record<string, ModelContext> } | undefined {
  if (!isRecord(body) || !Array.isArray(body.models)) return undefined;
  const loadedIds: string[] = [];
  const models: Record<string, ModelContext> = {};
  for (const entry of body.models) {
    if (!isRecord(entry)) continue;
    const id = typeof entry.model === 'string' && entry.model ? entry.model : typeof entry.name === 'string' ? entry.name : '';
    if (!id) continue;
    loadedIds.push(id);
    const nCtx = positiveInt(entry.context_length);
    if (nCtx !== undefined) models[id] = { nCtx, slots: undefined };
  }
  return { loadedIds, models };
}

/** Pure: Ollama's `"data": null` is its empty list; everything else is left to the list parser. */
export function ollamaListing(body: unknown): unknown {
  return isRecord(body) && body.data === null ? { ...body, data: [] } : body;
}

const OLLAMA_CAPACITY: CapacityDialect = {
  path: '/api/ps',
  parse(body) {
    const ps = parseOllamaPs(body);
    return ps === undefined ? undefined : { shape: 'loaded', loadedIds: ps.loadedIds, models: ps.models };
  },
  perModel: undefined,
};

const REFUSALS: RefusalDialect = {
  overflowTypes: [],
  // Ollama truncates chat prompts; only embeddings refuse an overlong input.
  overflowTexts: [/the input length exceeds the context length/i],
  // The OpenAI routes' `model "x" not found, try pulling it first`; the native API's `model 'x' not found`.
  notFoundTexts: [/model ".*" not found/i, /model '.*' not found/i],
};

/** `/api/version` is Ollama's own and answers `{"version": "0.x.y"}` (its listing names no owner). */
const DETECTOR: KindDetector = {
  paths: [LISTING_PATH, '/api/version'],
  detect(answers) {
    const version = okBody(answers, '/api/version');
    if (!isRecord(version) || typeof version.version !== 'string') return undefined;
    return { kind: 'ollama', role: 'unknown', evidence: 'GET /api/version answers {"version": …}' };
  },
};

export const ollama: ServerKind = {
  name: 'ollama',
  healthPaths: ['/api/version'],
  normalizeListing: ollamaListing,
  listingEntry: readListingEntry,
  capacity: OLLAMA_CAPACITY,
  tokenize: undefined,
  load: undefined,
  loadPaths: NO_LOAD_PATHS,
  kvPool: poolWhenLlamaServer,
  silentlyTruncates: true,
  streamUsage: ASKED_NO_NULLS,
  // Go's encoding/json: a key matches a field case-insensitively, and the last match wins.
  jsonKeys: 'case-insensitive',
  resolveModelName: ollamaName,
  refusal: (status, body) => readRefusal(REFUSALS, status, body),
  detector: DETECTOR,
  endpoints: OLLAMA_ENDPOINTS,
  modelOps: ollamaModelOps,
  modelEvents: () => undefined,
};
