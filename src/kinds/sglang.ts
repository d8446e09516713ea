// SGLang (PROTOCOLS.md §4): /health, one listing card with `max_model_len`, vLLM's `/tokenize`
// request, and flat (legacy vLLM style) error bodies.

import { LISTING_PATH, listedAsOwnedBy } from './detection.ts';
import { readRefusal, type RefusalDialect } from './refusal.ts';
import { SGLANG_LOAD } from './load-metrics.ts';
import type { KindDetector, ServerKind } from './server-kind.ts';
import { OPENAI_SERVER_TOKENIZE } from './vllm.ts';
import { exactName } from './model-names.ts';
import { poolWhenLlamaServer } from './kv-pool.ts';
import { METRICS_PATHS } from './load-paths.ts';
import { readListingEntry } from './listing-entry.ts';
import { ASKED_NO_NULLS } from './stream-usage.ts';
import { SGLANG_ENDPOINTS } from './endpoint-sets.ts';
import { NO_MODEL_OPS } from './model-ops.ts';

const REFUSALS: RefusalDialect = {
  overflowTypes: [],
  overflowTexts: [/is longer than the model's context length/i, /maximum context length/i],
  // "The model 'X' does not exist" (quoted with straight quotes, unlike vLLM's backticks).
  notFoundTexts: [/does not exist/i],
};

/** Its listing's cards say `owned_by: "sglang"` (PROTOCOLS.md §4). */
const DETECTOR: KindDetector = {
  paths: [LISTING_PATH],
  detect: (answers) =>
    listedAsOwnedBy(answers, 'sglang')
      ? { kind: 'sglang', role: 'unknown', evidence: 'its model list says owned_by "sglang"' }
      : undefined,
};

export const sglang: ServerKind = {
  name: 'sglang',
  healthPaths: ['/health'],
  normalizeListing: (body) => body,
  listingEntry: readListingEntry,
  capacity: undefined,
  tokenize: OPENAI_SERVER_TOKENIZE,
  load: SGLANG_LOAD,
  loadPaths: METRICS_PATHS,
  kvPool: poolWhenLlamaServer,
  silentlyTruncates: false,
  // Every chunk carries `"usage":null` whether asked or not (it writes every field): they stay.
  streamUsage: ASKED_NO_NULLS,
  // Python's json into a dict (last repeated key wins), then pydantic fields: keys exact.
  jsonKeys: 'exact',
  resolveModelName: exactName,
  refusal: (status, body) => readRefusal(REFUSALS, status, body),
  detector: DETECTOR,
  endpoints: SGLANG_ENDPOINTS,
  modelOps: NO_MODEL_OPS,
  modelEvents: () => undefined,
};
