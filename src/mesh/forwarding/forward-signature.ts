// The signature on a forwarded request (RFC 9421 through the http-message-signatures package):
// label `sy`, alg ed25519, keyid = the forwarding site's id, covering the request line, the body's
// Content-Digest and the forwarding header — and the tenant header when the forward has a tenant
// (forward-tenant.ts) — with `created`, `expires` and a random `nonce` (the receiver accepts each
// nonce once: seen-forwards.ts). docs/federation-forwarding.md describes it for other implementations.

import { randomBytes, sign } from 'node:crypto';
import { httpbis } from 'http-message-signatures';
import type { SiteKey } from '../site-key.ts';
import { contentDigest } from './content-digest.ts';
import { encodeTenantHeader, TENANT_HEADER, type ForwardTenantClaim } from './forward-tenant.ts';
import { FORWARDED_BY } from './forwarded-by.ts';

export const SIGNATURE_LABEL = 'sy';
export const SIGNED_COMPONENTS: readonly string[] = ['@method', '@authority', '@path', '@query', 'content-digest', FORWARDED_BY];
/** The components of a forward that states its tenant: the tenant header is covered too. */
export const SIGNED_COMPONENTS_WITH_TENANT: readonly string[] = [...SIGNED_COMPONENTS, TENANT_HEADER];
export const SIGNATURE_PARAMS: readonly string[] = ['created', 'expires', 'nonce', 'keyid', 'alg'];
/** A nonce as the receiver accepts it: base64url, 16 to 64 characters (this side sends 16 random bytes). */
export const NONCE_RULE = /^[A-Za-z0-9_-]{16,64}$/;

export interface ForwardToSign {
  readonly method: string;
  /** The full URL the request goes to: `<site url><endpoint>`. */
  readonly url: string;
  /** The request's headers (lower-case names); returned with the signing headers added. */
  readonly headers: Record<string, string>;
  readonly body: Uint8Array;
  /** This site's id: the keyid and the forwarded-by value. */
  readonly site: string;
  readonly key: SiteKey;
  /** Wall-clock ms (the injected clock's `now()`). */
  readonly nowMs: number;
  /** How long the signature is valid: `[mesh] max_clock_skew`. */
  readonly lifetimeMs: number;
  /** The signature's nonce; absent = 16 random bytes (tests fix it to replay a signature). */
  readonly nonce?: string;
  /** The tenant the request is forwarded for (signed in the tenant header); undefined = none (an open gateway). */
  readonly tenant?: ForwardTenantClaim | undefined;
}

/**
 * The headers to send: `headers` plus Content-Digest, the forwarded-by header, the tenant header
 * (only with a tenant; every copy in `headers` is dropped), Signature-Input and Signature.
 */
export async function signForward(input: ForwardToSign): Promise<Record<string, string>> {
  const headers: Record<string, string> = {
    ...input.headers,
    'content-digest': contentDigest(input.body),
    [FORWARDED_BY]: input.site,
  };
  delete headers[TENANT_HEADER];
  if (input.tenant !== undefined) headers[TENANT_HEADER] = encodeTenantHeader(input.tenant);
  const signed = await httpbis.signMessage(
    {
      key: { id: input.site, alg: 'ed25519', sign: (data: Buffer) => Promise.resolve(sign(null, data, input.key.privateKey)) },
      name: SIGNATURE_LABEL,
      fields: [...(input.tenant === undefined ? SIGNED_COMPONENTS : SIGNED_COMPONENTS_WITH_TENANT)],
      params: [...SIGNATURE_PARAMS],
      paramValues: {
        created: new Date(input.nowMs),
        expires: new Date(input.nowMs + input.lifetimeMs),
        nonce: input.nonce ?? randomBytes(16).toString('base64url'),
      },
    },
    { method: input.method, url: input.url, headers },
  );
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers))
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}
