// vLLM's OpenAI server (PROTOCOLS.md §2): /health, `max_model_len` in its listing (so no capacity
// request), a `/tokenize` that takes `prompt`, and errors nested (current) or flat (older).

import { LISTING_PATH, listedAsOwnedBy } from './detection.ts';
import { readRefusal, type RefusalDialect } from './refusal.ts';
import { VLLM_LOAD } from './load-metrics.ts';
import type { KindDetector, ServerKind, TokenizeDialect } from './server-kind.ts';
import { tokenCountOf } from './tokenize-answer.ts';
import { exactName } from './model-names.ts';
import { poolWhenLlamaServer } from './kv-pool.ts';
import { METRICS_PATHS } from './load-paths.ts';
import { readListingEntry } from './listing-entry.ts';
import { ASKED_WITH_NULLS } from './stream-usage.ts';
import { VLLM_ENDPOINTS } from './endpoint-sets.ts';
import { NO_MODEL_OPS } from './model-ops.ts';

/** vLLM's `/tokenize`; SGLang answers the same request. */
export const OPENAI_SERVER_TOKENIZE: TokenizeDialect = {
  request: (model, text) => ({ path: '/tokenize', body: { model, prompt: text } }),
  count: tokenCountOf,
};

const REFUSALS: RefusalDialect = {
  overflowTypes: [],
  // The serving-engine texts, and the v1 engine's "longer than the maximum model length of M" (§2.3).
  overflowTexts: [/maximum context length/i, /longer than the maximum model length/i],
  notFoundTexts: [/The model `.*` does not exist/i],
};

/** Its listing's cards say `owned_by: "vllm"` (PROTOCOLS.md §2.1). */
const DETECTOR: KindDetector = {
  paths: [LISTING_PATH],
  detect: (answers) =>
    listedAsOwnedBy(answers, 'vllm')
      ? { kind: 'vllm', role: 'unknown', evidence: 'its model list says owned_by "vllm"' }
      : undefined,
};

export const vllm: ServerKind = {
  name: 'vllm',
  healthPaths: ['/health'],
  normalizeListing: (body) => body,
  listingEntry: readListingEntry,
  capacity: undefined,
  tokenize: OPENAI_SERVER_TOKENIZE,
  load: VLLM_LOAD,
  loadPaths: METRICS_PATHS,
  kvPool: poolWhenLlamaServer,
  silentlyTruncates: false,
  // Before 0.6 it put `"usage":null` on every chunk once asked; later releases add none.
  streamUsage: ASKED_WITH_NULLS,
  // Python's json into a dict (last repeated key wins), then pydantic fields: keys exact.
  jsonKeys: 'exact',
  resolveModelName: exactName,
  refusal: (status, body) => readRefusal(REFUSALS, status, body),
  detector: DETECTOR,
  endpoints: VLLM_ENDPOINTS,
  modelOps: NO_MODEL_OPS,
  modelEvents: () => undefined,
};
