// A plain OpenAI-compatible server (OpenAI itself, or a proxy in front of anything): only the
// standard surface is assumed, so health is "`/v1/models` answers" and figures come from the listing.
// Its refusals are read in OpenAI's dialect and in those of the servers such a proxy may front.

import { llamacpp } from './llamacpp.ts';
import { ollama } from './ollama.ts';
import { LISTING_PATH, listingEntries } from './detection.ts';
import { firstMeaning, readRefusal, type RefusalDialect } from './refusal.ts';
import type { KindDetector, ServerKind } from './server-kind.ts';
import { sglang } from './sglang.ts';
import { vllm } from './vllm.ts';
import { exactName } from './model-names.ts';
import { poolWhenLlamaServer } from './kv-pool.ts';
import { NO_LOAD_PATHS } from './load-paths.ts';
import { readListingEntry } from './listing-entry.ts';
import { ASKED_WITH_NULLS } from './stream-usage.ts';
import { OPENAI_SURFACE } from './endpoint-sets.ts';
import { NO_MODEL_OPS } from './model-ops.ts';

const REFUSALS: RefusalDialect = {
  overflowTypes: [],
  overflowTexts: [/maximum context length/i],
  notFoundTexts: [/The model `.*` does not exist/i],
};

const FRONTED: readonly ServerKind[] = [llamacpp, vllm, sglang, ollama];

/** Anything that answers the OpenAI model list: the last resort, so it is tried last. */
const DETECTOR: KindDetector = {
  paths: [LISTING_PATH],
  detect: (answers) =>
    listingEntries(answers) === undefined
      ? undefined
      : { kind: 'openai', role: 'unknown', evidence: 'GET /v1/models answers an OpenAI model list' },
};

export const openai: ServerKind = {
  name: 'openai',
  healthPaths: ['/v1/models'],
  normalizeListing: (body) => body,
  listingEntry: readListingEntry,
  capacity: undefined,
  tokenize: undefined,
  load: undefined,
  loadPaths: NO_LOAD_PATHS,
  kvPool: poolWhenLlamaServer,
  silentlyTruncates: false,
  streamUsage: ASKED_WITH_NULLS,
  // Any server at all: its decoder is not known, so the loosest is assumed.
  jsonKeys: 'case-insensitive',
  resolveModelName: exactName,
  refusal: (status, body) =>
    firstMeaning([readRefusal(REFUSALS, status, body), ...FRONTED.map((kind) => kind.refusal(status, body))]),
  detector: DETECTOR,
  endpoints: OPENAI_SURFACE,
  modelOps: NO_MODEL_OPS,
  modelEvents: () => undefined,
};
