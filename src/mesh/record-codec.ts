// Encoding and decoding of gossip message data (docs/federation.md, "Wire format"):
//   a record:  UTF-8 JSON {"record": {...}, "sig": "<base64url Ed25519 over RFC 8785 JSON of record>"}
//   a want:    UTF-8 JSON {"want": "<site id>"}, asking that site to publish its full record now.
// The signature covers the RFC 8785 canonical form of the record as parsed, so the sender's key
// order and whitespace do not matter, and fields unknown to this version are signed like the rest.

import { createHash, sign } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { SignedRecord, SiteRecord, SiteRecordModel } from './site-record.ts';
import type { SiteKey } from './site-key.ts';
import { firstProblem, recordShape, signedShape, wantShape } from './record-shape.ts';
import { isSiteId } from '#src/mesh/config/mesh-config.ts';

/** A message decoded far enough to verify: the record, the exact bytes signed, the signature. */
export type DecodedRecord =
  | { readonly ok: true; readonly record: SiteRecord; readonly signedBytes: Uint8Array; readonly sig: Uint8Array }
  | {
      readonly ok: false;
      readonly reason: 'oversized' | 'malformed';
      readonly site: string | undefined;
      readonly detail: string;
    };

/** RFC 8785 canonical JSON of `value`, UTF-8. Throws on values JSON cannot represent. */
export function canonicalBytes(value: unknown): Uint8Array {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('cannot canonicalize a value JSON cannot represent');
  return new TextEncoder().encode(text);
}

/** The message data publishing `record`, signed with the site's key. Throws on a record receivers would reject as malformed. */
export function signRecord(record: SiteRecord, key: SiteKey): Uint8Array {
  const checked = recordShape.safeParse(record);
  if (!checked.success) throw new Error(`signRecord: the record is malformed (${firstProblem(checked.error)})`);
  const sig = sign(null, canonicalBytes(record), key.privateKey);
  const message: SignedRecord = { record, sig: sig.toString('base64url') };
  return new TextEncoder().encode(JSON.stringify(message));
}

/** base64url (no padding) SHA-256 of the RFC 8785 canonical JSON of the models array: what a heartbeat's models_digest says. */
export function modelsDigest(models: readonly SiteRecordModel[]): string {
  return createHash('sha256').update(canonicalBytes(models)).digest('base64url');
}

export function encodeWant(site: string): Uint8Array {
  if (!isSiteId(site)) throw new Error('encodeWant: not a site id');
  return new TextEncoder().encode(JSON.stringify({ want: site }));
}

/** The site a want message asks for, or undefined when `data` is not a (well-formed, bounded) want. */
export function decodeWant(data: Uint8Array, maxBytes: number): string | undefined {
  if (data.byteLength > maxBytes) return undefined;
  const parsed = wantShape.safeParse(parseJson(data));
  return parsed.success ? parsed.data.want : undefined;
}

/** Size, then JSON, then shape: nothing is parsed before the size is known to be within bounds. */
export function decodeRecord(data: Uint8Array, maxBytes: number): DecodedRecord {
  if (data.byteLength > maxBytes)
    return {
      ok: false,
      reason: 'oversized',
      site: undefined,
      detail: `${data.byteLength} bytes, over the ${maxBytes}-byte limit`,
    };
  const json = parseJson(data);
  if (json === NOT_JSON) return malformed(undefined, 'not UTF-8 JSON');
  const outer = signedShape.safeParse(json);
  if (!outer.success) return malformed(claimedSite(json), firstProblem(outer.error));
  const site = claimedSite(json);
  const inner = recordShape.safeParse(outer.data.record);
  if (!inner.success) return malformed(site, `record.${firstProblem(inner.error)}`);
  let signedBytes: Uint8Array;
  try {
    signedBytes = canonicalBytes(outer.data.record);
  } catch (error) {
    // Deeply nested extra fields can exhaust the stack; that is malformed input, not a crash.
    return malformed(site, `record cannot be canonicalized (${error instanceof Error ? error.name : 'error'})`);
  }
  // The verified bytes are those of the record as parsed, extras and all; zod's copy keeps the extras too.
  return { ok: true, record: inner.data, signedBytes, sig: Buffer.from(outer.data.sig, 'base64url') };
}

const NOT_JSON = Symbol('not JSON');

function parseJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data));
  } catch {
    return NOT_JSON;
  }
}

/** The record's site when it reads as a valid site id (an arbitrary string is never passed on to logs). */
function claimedSite(json: unknown): string | undefined {
  if (typeof json !== 'object' || json === null || !('record' in json)) return undefined;
  const record: unknown = json.record;
  if (typeof record !== 'object' || record === null || !('site' in record)) return undefined;
  return typeof record.site === 'string' && isSiteId(record.site) ? record.site : undefined;
}

function malformed(site: string | undefined, detail: string): DecodedRecord {
  return { ok: false, reason: 'malformed', site, detail };
}
