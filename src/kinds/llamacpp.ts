// llama.cpp `llama-server`, single server and router mode alike (PROTOCOLS.md §1). Both answer
// `GET /props`: a router says `role: "router"` and is asked per loaded model with `?model=`, which
// LOADS the model unless `autoload=false` is added (the poller also asks only loaded models).

import { isRecord } from '#src/core/is-record.ts';
import { positiveInt } from './json-fields.ts';
import { LLAMACPP_LOAD } from './load-metrics.ts';
import { readRefusal, type RefusalDialect } from './refusal.ts';
import type { CapacityDialect, ModelContext, ServerKind, ServerRole, TokenizeDialect } from './server-kind.ts';
import { tokenCountOf } from './tokenize-answer.ts';

export interface PropsReading {
  readonly role: ServerRole;
  /** Undefined for a router, whose n_ctx is 0 and means nothing. */
  readonly context: ModelContext | undefined;
}

/** Pure: GET /props (plain or ?model=): router or single, and `n_ctx` per slot + total_slots. */
export function parseLlamaProps(body: unknown): PropsReading | undefined {
  if (!isRecord(body)) return undefined;
  if (body.role === 'router') return { role: 'router', context: undefined };
  const settings = body.default_generation_settings;
  const nCtx = isRecord(settings) ? positiveInt(settings.n_ctx) : undefined;
  if (nCtx === undefined) return undefined;
  return { role: 'single', context: { nCtx, slots: positiveInt(body.total_slots) } };
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
    return props.context === undefined ? { shape: 'router' } : { shape: 'single', host: props.context };
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

export const llamacpp: ServerKind = {
  name: 'llamacpp',
  healthPaths: ['/health'],
  normalizeListing: (body) => body,
  capacity: LLAMACPP_CAPACITY,
  tokenize: LLAMACPP_TOKENIZE,
  load: LLAMACPP_LOAD,
  llamaLike: true,
  refusal: (status, body) => readRefusal(REFUSALS, status, body),
};
