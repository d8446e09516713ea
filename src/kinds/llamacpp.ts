// llama.cpp `llama-server`, single server and router mode alike (PROTOCOLS.md §1). Both answer
// `GET /props`: a router says `role: "router"` and is asked per loaded model with `?model=`, which
// LOADS the model unless `autoload=false` is added (the poller also asks only loaded models).

import { isRecord } from '#src/core/is-record.ts';
import { LISTING_PATH, listingEntries, okBody } from './detection.ts';
import { positiveInt } from './json-fields.ts';
import { LLAMACPP_LOAD } from './load-metrics.ts';
import { readRefusal, type RefusalDialect } from './refusal.ts';
import type {
  CapacityDialect,
  KindDetector,
  ModelContext,
  RouterLimits,
  ServerKind,
  ServerRole,
  TokenizeDialect,
} from './server-kind.ts';
import { tokenCountOf } from './tokenize-answer.ts';
import { aliasedName } from './model-names.ts';
import { LLAMA_KV_POOL } from './kv-pool.ts';
import { LLAMACPP_LOAD_PATHS } from './load-paths.ts';
import { readListingEntry } from './listing-entry.ts';
import type { StreamUsage } from './stream-usage.ts';

/**
 * Never asked (PROTOCOLS.md §1.12, §7): a chat stream's finish chunk carries `timings` (prompt_n +
 * cache_n, predicted_n), a completions stream's last chunk `usage`. Asking would move `timings` to
 * the extra usage chunk, which the client would then not get.
 */
export const LLAMACPP_STREAM_USAGE: StreamUsage = Object.freeze({ askOn: [], nullsWhenAsked: false });
import { LLAMACPP_ENDPOINTS } from './endpoint-sets.ts';
import { LLAMACPP_ROUTER_OPS } from './model-ops.ts';
import { LLAMACPP_ROUTER_EVENTS } from './llamacpp-events.ts';

export interface PropsReading {
  readonly role: ServerRole;
  /** A router's own limits, when it reports them (absent on a single server). */
  readonly limits?: RouterLimits;
  /** Undefined for a router, whose n_ctx is 0 and means nothing. */
  readonly context: ModelContext | undefined;
}

/** Pure: GET /props (plain or ?model=): router or single, and `n_ctx` per slot + total_slots. */
export function parseLlamaProps(body: unknown): PropsReading | undefined {
  if (!isRecord(body)) return undefined;
  if (body.role === 'router') {
    const limits = routerLimits(body);
    return limits === undefined ? { role: 'router', context: undefined } : { role: 'router', context: undefined, limits };
  }
  const settings = body.default_generation_settings;
  const nCtx = isRecord(settings) ? positiveInt(settings.n_ctx) : undefined;
  if (nCtx === undefined) return undefined;
  return { role: 'single', context: { nCtx, slots: positiveInt(body.total_slots) } };
}

/** `max_instances` (a whole number, 0 = unlimited) and `models_autoload`; undefined when neither is there. */
function routerLimits(body: Readonly<Record<string, unknown>>): RouterLimits | undefined {
  const max = body.max_instances;
  const maxInstances = typeof max === 'number' && Number.isInteger(max) && max >= 0 ? max : undefined;
  const autoload = typeof body.models_autoload === 'boolean' ? body.models_autoload : undefined;
  return maxInstances === undefined && autoload === undefined ? undefined : { maxInstances, autoload };
}

/** The /props path that asks a router about one model without loading it. */
export function routerPropsPath(modelId: string): string {
  return `/props?model=${encodeURIComponent(modelId)}&autoload=false`;
}

export const LLAMACPP_CAPACITY: CapacityDialect = {
  path: '/props',
  parse(body) {
    const props = parseLlamaProps(body);
    if (props === undefined) return undefined;
    if (props.context !== undefined) return { shape: 'single', host: props.context };
    return props.limits === undefined ? { shape: 'router' } : { shape: 'router', limits: props.limits };
  },
  perModel: { path: routerPropsPath, parse: (body) => parseLlamaProps(body)?.context },
};

/** A router routes /tokenize by `model`; `autoload=false` keeps it from loading one to count. */
export const LLAMACPP_TOKENIZE: TokenizeDialect = {
  request: (model, text) => ({ path: '/tokenize?autoload=false', body: { model, content: text, add_special: true } }),
  count: tokenCountOf,
};

const REFUSALS: RefusalDialect = {
  overflowTypes: ['exceed_context_size_error'],
  // The older bare text, and the text for a prompt that cannot be split across batches (§1.11).
  overflowTexts: [/exceeds the available context size/i, /larger than the max context size/i],
  // A router's 400 for an unknown model; a single server accepts any model name.
  notFoundTexts: [/model '.*' not found/i],
};

/**
 * Plain `/props` is the llama-server's own (a router answers it itself, loading nothing) and says
 * router or single. Without it (e.g. it needs the API key) the public listing still names the
 * owner, and only a router's entries carry a `status` (PROTOCOLS.md §1.2, §1.3, §7).
 */
const DETECTOR: KindDetector = {
  paths: [LISTING_PATH, '/props'],
  detect(answers) {
    const props = parseLlamaProps(okBody(answers, '/props'));
    if (props?.role === 'router') return { kind: 'llamacpp', role: 'router', evidence: 'GET /props says role "router"' };
    if (props !== undefined) return { kind: 'llamacpp', role: 'single', evidence: 'GET /props answers with its n_ctx and slots' };
    const owned = (listingEntries(answers) ?? []).filter((entry) => isRecord(entry) && entry.owned_by === 'llamacpp');
    if (owned.length === 0) return undefined;
    const router = owned.some((entry) => isRecord(entry) && isRecord(entry.status));
    return {
      kind: 'llamacpp',
      role: router ? 'router' : 'single',
      evidence: `its model list says owned_by "llamacpp"${router ? ' with a load status' : ''}`,
    };
  },
};

export const llamacpp: ServerKind = {
  name: 'llamacpp',
  healthPaths: ['/health'],
  normalizeListing: (body) => body,
  listingEntry: readListingEntry,
  capacity: LLAMACPP_CAPACITY,
  tokenize: LLAMACPP_TOKENIZE,
  load: LLAMACPP_LOAD,
  loadPaths: LLAMACPP_LOAD_PATHS,
  kvPool: () => LLAMA_KV_POOL,
  silentlyTruncates: false,
  streamUsage: LLAMACPP_STREAM_USAGE,
  // nlohmann::json: keys exact, a repeated key's last value kept.
  jsonKeys: 'exact',
  resolveModelName: aliasedName,
  refusal: (status, body) => readRefusal(REFUSALS, status, body),
  detector: DETECTOR,
  endpoints: LLAMACPP_ENDPOINTS,
  // Only a router loads and unloads models on request.
  modelOps: (role) => (role === 'router' ? LLAMACPP_ROUTER_OPS : undefined),
  // Only a router pushes its models' state (b10573+; an older router answers 404 and is polled only).
  modelEvents: (role) => (role === 'router' ? LLAMACPP_ROUTER_EVENTS : undefined),
};
