// `auto`: the kind is not configured, so the node is asked what each kind would be asked and the
// answers tell it apart. Health tries /health, then Ollama's /api/version, and falls back to
// /v1/models only when neither exists (probing the listing would tie health to it). A /props answer
// marks a llama-server (see llama-like.ts); error bodies are read in every dialect.

import { llamacpp } from './llamacpp.ts';
import { ollama } from './ollama.ts';
import { openai } from './openai.ts';
import { firstMeaning } from './refusal.ts';
import { ANY_LOAD } from './load-metrics.ts';
import type { Detection, KindDetector, RefusalMeaning, ServerKind } from './server-kind.ts';
import { sglang } from './sglang.ts';
import { vllm } from './vllm.ts';
import { poolWhenLlamaServer } from './kv-pool.ts';
import { METRICS_PATHS } from './load-paths.ts';
import { readListingEntry } from './listing-entry.ts';
import { ASKED_WITH_NULLS } from './stream-usage.ts';
import { ALL_ENDPOINTS } from './endpoint-sets.ts';
import { NO_MODEL_OPS } from './model-ops.ts';

/**
 * In the order their health paths are tried and their detectors asked: the specific ones first,
 * the plain OpenAI one last (any of the others would also pass it).
 */
const DETECTABLE: readonly ServerKind[] = [llamacpp, vllm, sglang, ollama, openai];

/** Every kind's GETs, asked once each; the first kind in DETECTABLE that recognises the answers wins. */
const DETECTOR: KindDetector = {
  paths: [...new Set(DETECTABLE.flatMap((kind) => kind.detector.paths))],
  detect: (answers) =>
    DETECTABLE.reduce<Detection | undefined>((found, kind) => found ?? kind.detector.detect(answers), undefined),
};

export const auto: ServerKind = {
  name: 'auto',
  healthPaths: [...new Set(DETECTABLE.flatMap((kind) => kind.healthPaths))],
  // The listing quirks never collide (only Ollama has one), so all are applied.
  normalizeListing: (body) => DETECTABLE.reduce((listing, kind) => kind.normalizeListing(listing), body),
  listingEntry: readListingEntry,
  // Only llama.cpp's /props is asked: its answer is what tells a llama-server apart. Ollama's
  // /api/ps is asked of nodes configured as `ollama`.
  capacity: llamacpp.capacity,
  // None of its own: a node detected as a llama-server is asked llama.cpp's (tokenizerFor).
  tokenize: undefined,
  load: ANY_LOAD,
  loadPaths: METRICS_PATHS,
  // A node that answers /props as a llama-server (router or single) is one.
  kvPool: poolWhenLlamaServer,
  // A node not yet told apart may be an Ollama: cautious until it answers /props as a llama-server.
  silentlyTruncates: true,
  // Not told apart yet: asked, and `"usage":null` taken out as OpenAI's unasked streams have none
  // (of an SGLang, which sends them asked or not, that drops nulls it would have sent: harmless).
  streamUsage: ASKED_WITH_NULLS,
  // Not told apart yet: it may be an Ollama (Go's case-insensitive decoder).
  jsonKeys: 'case-insensitive',
  // Unknown kind: the first kind's rule that finds the name, the specific ones first. Safe because the node is sent the id it
  // listed, never the name as typed: a rule of the wrong kind can only find a name the node knows.
  resolveModelName: (requested, listed) =>
    DETECTABLE.reduce<string | undefined>((found, kind) => found ?? kind.resolveModelName(requested, listed), undefined),
  refusal: (status, body) => firstMeaning(DETECTABLE.map((kind) => kind.refusal(status, body))),
  detector: DETECTOR,
  endpoints: ALL_ENDPOINTS,
  modelOps: NO_MODEL_OPS,
  modelEvents: () => undefined,
};

/**
 * An error answer read in every kind's dialect, as `auto` reads it: what the request path uses for
 * any node, since a configured kind may be a proxy in front of another (a refusal missed would be
 * passed through as is).
 */
export function refusalInAnyDialect(status: number, body: unknown): RefusalMeaning | undefined {
  return auto.refusal(status, body);
}
