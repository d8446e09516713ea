// The federation's wire formats written from docs/federation.md by the tests themselves, not with
// the gateway's own code: a signed record message (RFC 8785 canonical JSON, Ed25519) and a signed
// forwarded request (RFC 9421, label `sy`). If the gateway drifts from its documented format,
// these tests fail — an independent second implementation, as another vendor's would be.

import { createHash, randomBytes, sign, type KeyObject } from 'node:crypto';
import canonicalize from 'canonicalize';
import { httpbis } from 'http-message-signatures';
import { privateKeyFromRaw } from '@libp2p/crypto/keys';
import type { PrivateKey } from '@libp2p/interface';
import type { SiteKeyMaterial } from './mesh-fleet.ts';

export interface WireRecord {
  readonly v: 1;
  readonly site: string;
  readonly url: string;
  readonly revision: number;
  readonly issued_at: number;
  readonly models?: readonly { readonly id: string; readonly ctx?: number }[];
  readonly models_digest?: string;
  readonly load: { readonly in_flight: number; readonly queued: number; readonly slots: number };
}

/** Message data: UTF-8 JSON {record, sig}, sig = base64url Ed25519 over the canonical JSON of record. */
export function recordMessage(record: WireRecord, key: KeyObject): Uint8Array {
  const canonical = canonicalize(record);
  if (canonical === undefined) throw new Error('record is not canonicalizable');
  const sig = sign(null, Buffer.from(canonical, 'utf8'), key).toString('base64url');
  return new TextEncoder().encode(JSON.stringify({ record, sig }));
}

/** The libp2p identity of a site key (same Ed25519 key). */
export function libp2pKeyOf(key: SiteKeyMaterial): PrivateKey {
  const jwk = key.privateKey.export({ format: 'jwk' });
  return privateKeyFromRaw(Buffer.concat([Buffer.from(jwk.d ?? '', 'base64url'), Buffer.from(jwk.x ?? '', 'base64url')]));
}

export interface ForwardSpec {
  readonly url: string;
  readonly body: string;
  /** The site the request claims to come from (keyid and x-switchyard-forwarded-by). */
  readonly site: string;
  /** The key that signs it (the claimed site's, or another to forge). */
  readonly key: KeyObject;
  readonly nowMs?: number;
  readonly lifetimeMs?: number;
  /** The signature's nonce (each is accepted once); absent = 16 random bytes, base64url. */
  readonly nonce?: string;
}

/** Headers of a forwarded POST: Content-Digest (RFC 9530), the forwarded-by header, Signature-Input, Signature. */
export async function forwardHeaders(spec: ForwardSpec): Promise<Record<string, string>> {
  const now = spec.nowMs ?? Date.now();
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-digest': `sha-256=:${createHash('sha256').update(spec.body).digest('base64')}:`,
    'x-switchyard-forwarded-by': spec.site,
  };
  const signed = await httpbis.signMessage(
    {
      key: { id: spec.site, alg: 'ed25519', sign: (data: Buffer) => Promise.resolve(sign(null, data, spec.key)) },
      name: 'sy',
      fields: ['@method', '@authority', '@path', '@query', 'content-digest', 'x-switchyard-forwarded-by'],
      params: ['created', 'expires', 'nonce', 'keyid', 'alg'],
      paramValues: {
        created: new Date(now),
        expires: new Date(now + (spec.lifetimeMs ?? 30_000)),
        nonce: spec.nonce ?? randomBytes(16).toString('base64url'),
      },
    },
    { method: 'POST', url: spec.url, headers },
  );
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers))
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  return out;
}
