// The receiving side of a forwarded request: is it signed by a pinned site, over what it claims,
// within the clock-skew window? Decided from the head, before API-key auth and before the body is
// read; the body's Content-Digest is checked once the body is in (content-digest.ts). Every
// refusal names its problem, and the answer is 401.

import { verify, type KeyObject } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { httpbis } from 'http-message-signatures';
import { FORWARDED_BY, SIGNATURE_LABEL, SIGNATURE_PARAMS, SIGNED_COMPONENTS } from './forward-signature.ts';

export const FORWARD_REJECTIONS = {
  unsigned: 'unsigned forwarded request',
  unknown_site: 'unknown site',
  bad_signature: 'bad signature',
  expired: 'signature expired',
  digest_mismatch: 'content digest mismatch',
} as const;
export type ForwardRejection = keyof typeof FORWARD_REJECTIONS;

export type ForwardVerdict =
  | { readonly ok: true; readonly site: string }
  | { readonly ok: false; readonly rejection: ForwardRejection; readonly detail: string; /** The claimed site when it is pinned (a bounded label). */ readonly site: string | undefined };

export interface ForwardHead {
  readonly method: string;
  /** The request target as received (`req.url`). */
  readonly target: string;
  readonly headers: IncomingHttpHeaders;
}

export interface VerifyContext {
  readonly pins: ReadonlyMap<string, KeyObject>;
  /** Wall-clock ms (the injected clock's `now()`). */
  readonly nowMs: number;
  readonly maxClockSkewMs: number;
}

/** Whether the head claims to be forwarded or signed, and so must be verified (cheap: three lookups). */
export function claimsForward(headers: IncomingHttpHeaders): boolean {
  return headers[FORWARDED_BY] !== undefined || headers.signature !== undefined || headers['signature-input'] !== undefined;
}

/** Longer than any real skew: the package's own time checks use Date.now(); ours use the injected clock. */
const NO_PACKAGE_TIME_CHECK_S = 100 * 365 * 24 * 3600;

export async function verifyForward(head: ForwardHead, ctx: VerifyContext): Promise<ForwardVerdict> {
  const by = single(head.headers[FORWARDED_BY]);
  const input = single(head.headers['signature-input']);
  const signature = single(head.headers.signature);
  // The claimed site labels the refusal only when it is pinned (a bounded set); it proves nothing.
  const claimed = by !== undefined && ctx.pins.has(by) ? by : undefined;
  const reject = (rejection: ForwardRejection, detail: string, site = claimed): ForwardVerdict => ({ ok: false, rejection, detail, site });
  if (by === undefined) return reject('unsigned', `no single ${FORWARDED_BY} header`);
  if (input === undefined || signature === undefined) return reject('unsigned', 'no Signature-Input and Signature headers');
  if (single(head.headers['content-digest']) === undefined) return reject('unsigned', 'no Content-Digest header');
  const pinned = ctx.pins.get(by);
  if (pinned === undefined) return reject('unknown_site', `site '${by}' is not pinned in [[mesh.sites]]`);
  if (!input.trimStart().startsWith(`${SIGNATURE_LABEL}=`)) return reject('bad_signature', `no signature labelled '${SIGNATURE_LABEL}'`, by);
  const host = single(head.headers.host);
  if (host === undefined) return reject('bad_signature', 'no Host header to check @authority against', by);

  const seen: { keyid?: unknown; created?: unknown; expires?: unknown }[] = [];
  let verified: boolean | null;
  try {
    verified = await httpbis.verifyMessage(
      {
        keyLookup: (params) => {
          seen.push({ keyid: params.keyid, created: params.created, expires: params.expires });
          if (params.keyid !== by) return Promise.resolve(null);
          return Promise.resolve({ id: by, algs: ['ed25519'], verify: (data: Buffer, sig: Buffer) => Promise.resolve(verify(null, data, pinned, sig)) });
        },
        requiredFields: [...SIGNED_COMPONENTS],
        requiredParams: [...SIGNATURE_PARAMS],
        tolerance: NO_PACKAGE_TIME_CHECK_S,
      },
      { method: head.method, url: `http://${host}${head.target}`, headers: stringHeaders(head.headers) },
    );
  } catch (error) {
    return reject('bad_signature', error instanceof Error ? error.message : String(error), by);
  }
  if (seen.length !== 1) return reject('bad_signature', `exactly one signature expected, got ${seen.length}`, by);
  const params = seen[0] ?? {};
  if (params.keyid !== by) return reject('bad_signature', `keyid '${String(params.keyid)}' is not the forwarding site '${by}'`, by);
  if (verified !== true) return reject('bad_signature', `the signature does not verify against the key pinned for '${by}'`, by);
  return judgeTimes(params, ctx, by) ?? { ok: true, site: by };
}

/** `created` within the skew window either way, `expires` not past (seconds, as RFC 9421 states them). */
function judgeTimes(params: { created?: unknown; expires?: unknown }, ctx: VerifyContext, site: string): ForwardVerdict | undefined {
  const created = seconds(params.created);
  const expires = seconds(params.expires);
  const now = ctx.nowMs / 1000;
  const skew = ctx.maxClockSkewMs / 1000;
  const expired = (detail: string): ForwardVerdict => ({ ok: false, rejection: 'expired', detail, site });
  if (created === undefined || expires === undefined) return expired('created and expires are required');
  if (created > now + skew) return expired(`created ${Math.round(created - now)} s in the future (max_clock_skew ${skew} s)`);
  if (created < now - skew) return expired(`created ${Math.round(now - created)} s ago (max_clock_skew ${skew} s)`);
  if (expires < now) return expired(`expired ${Math.round(now - expires)} s ago`);
  return undefined;
}

function seconds(value: unknown): number | undefined {
  if (value instanceof Date) return value.getTime() / 1000;
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function single(value: string | string[] | undefined): string | undefined {
  if (Array.isArray(value)) return value.length === 1 ? value[0] : undefined;
  return value === '' ? undefined : value;
}

function stringHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = value;
  return out;
}
