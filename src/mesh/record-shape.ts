// The strict shape of a gossip message's data, checked before anything else reads it. Fields this
// version does not know are allowed in the record (and covered by its signature) so a newer
// publisher can add some without older receivers rejecting it; the known fields must be exactly
// as documented in docs/federation.md. Integers must be safe integers (z.int), so JSON numbers
// mean the same in every implementation.

import { z } from 'zod';
import { normalizeNodeUrl } from '#src/config/index.ts';
import { isSiteId } from '#src/mesh/config/mesh-config.ts';

export const MAX_MODEL_ID_CHARS = 256;
export const MAX_URL_CHARS = 2048;
/** base64url (no padding) lengths of a SHA-256 digest and an Ed25519 signature. */
const DIGEST_B64URL = /^[A-Za-z0-9_-]{43}$/;
const SIGNATURE_B64URL = /^[A-Za-z0-9_-]{86}$/;

const count = z.int().min(0);

export const siteId = z.string().refine(isSiteId, { error: 'is not a site id (1 to 64 of A-Z a-z 0-9 . _ : @ -)' });

/** As `[mesh] url` loads: http(s), no credentials, query, fragment or /v1, no trailing slash. */
const httpUrl = z
  .string()
  .max(MAX_URL_CHARS)
  .refine(
    (text) => {
      const normal = normalizeNodeUrl(text);
      return normal.ok && normal.value === text;
    },
    { error: 'is not a normalised http(s) site URL' },
  );

export const recordModelShape = z.looseObject({
  id: z.string().min(1).max(MAX_MODEL_ID_CHARS),
  ctx: z.int().min(1).optional(),
  on_demand: z.boolean().optional(),
});

export const recordShape = z
  .looseObject({
    v: z.literal(1),
    site: siteId,
    url: httpUrl,
    revision: count,
    issued_at: count,
    models: z.array(recordModelShape).optional(),
    models_digest: z.string().regex(DIGEST_B64URL).optional(),
    load: z.looseObject({ in_flight: count, queued: count, slots: count }),
  })
  .refine((record) => (record.models === undefined) !== (record.models_digest === undefined), {
    error: 'must carry exactly one of models and models_digest',
  });

export const signedShape = z.looseObject({
  record: z.unknown(),
  sig: z.string().regex(SIGNATURE_B64URL, { error: 'is not a base64url Ed25519 signature (86 characters)' }),
});

export const wantShape = z.strictObject({ want: siteId });

/** The first problem of a failed parse, as "path: message", without quoting the input. */
export function firstProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid';
  const path = issue.path.map(String).join('.');
  return path === '' ? issue.message : `${path}: ${issue.message}`;
}
