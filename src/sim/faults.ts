// Faults a sim node can be switched into at runtime, per endpoint class. Patches merge into the
// current faults; `parseFaultPatch` validates what arrives on POST /__sim/faults.

import { z } from 'zod';

export const INFERENCE_FAULTS = [
  'none',
  'hang',
  'reset',
  'error500',
  'garbage',
  'slow_headers',
  'midstream_reset',
  'loading',
] as const;
export const MODELS_FAULTS = ['none', 'hang', 'no_data', 'error_body', 'garbage', 'empty', 'error500'] as const;
export const HEALTH_FAULTS = ['none', 'fail', 'hang'] as const;
export const TOKENIZE_FAULTS = ['none', 'hang'] as const;

export type InferenceFault = (typeof INFERENCE_FAULTS)[number];
export type ModelsFault = (typeof MODELS_FAULTS)[number];
export type HealthFault = (typeof HEALTH_FAULTS)[number];
export type TokenizeFault = (typeof TOKENIZE_FAULTS)[number];

export interface SimFaults {
  /** Chat, completions, embeddings and responses endpoints. */
  readonly inference: InferenceFault;
  /** How long `slow_headers` holds the response back. */
  readonly slowHeadersMs: number;
  /** SSE events `midstream_reset` lets through before destroying the socket. */
  readonly midstreamAfterChunks: number;
  /** The model list endpoints (/v1/models, and /models on llama.cpp). */
  readonly models: ModelsFault;
  /** The health endpoints of the kind. */
  readonly health: HealthFault;
  /** `POST …/tokenize` (a tokenizer that misses the gateway's tokenize_timeout). */
  readonly tokenize: TokenizeFault;
}

export const NO_FAULTS: SimFaults = Object.freeze({
  inference: 'none',
  slowHeadersMs: 1000,
  midstreamAfterChunks: 2,
  models: 'none',
  health: 'none',
  tokenize: 'none',
});

const FaultPatch = z.strictObject({
  inference: z.enum(INFERENCE_FAULTS).optional(),
  slowHeadersMs: z.int().nonnegative().optional(),
  midstreamAfterChunks: z.int().nonnegative().optional(),
  models: z.enum(MODELS_FAULTS).optional(),
  health: z.enum(HEALTH_FAULTS).optional(),
  tokenize: z.enum(TOKENIZE_FAULTS).optional(),
});

export type FaultPatchResult =
  { readonly ok: true; readonly patch: Partial<SimFaults> } | { readonly ok: false; readonly message: string };

export function parseFaultPatch(value: unknown): FaultPatchResult {
  const parsed = FaultPatch.safeParse(value);
  if (parsed.success) return { ok: true, patch: parsed.data };
  const message = parsed.error.issues
    .map((issue) => `${issue.path.map(String).join('.') || '(body)'}: ${issue.message}`)
    .join('; ');
  return { ok: false, message };
}

export function mergeFaults(current: SimFaults, patch: Partial<SimFaults>): SimFaults {
  return Object.freeze({
    inference: patch.inference ?? current.inference,
    slowHeadersMs: patch.slowHeadersMs ?? current.slowHeadersMs,
    midstreamAfterChunks: patch.midstreamAfterChunks ?? current.midstreamAfterChunks,
    models: patch.models ?? current.models,
    health: patch.health ?? current.health,
    tokenize: patch.tokenize ?? current.tokenize,
  });
}
