// The receiving side of a forwarded request: is it signed by a pinned site other than this one,
// over this site's own `[mesh] url` and the request-target it arrived with, within the clock-skew
// window, and not used before? Decided from the head, before API-key auth and before the body
// is read; the body's Content-Digest is checked once the body is in (content-digest.ts). A tenant
// header, when present, must be covered by the signature (else it is tampering: bad_signature) and
// well formed (else 400 malformed_tenant). The replay memory holds the signature for this request
// (a replay, or a copy in flight, is refused at once); an accepted verdict carries the claim the
// request path uses once the forward is admitted within its site's tenant limits, or releases
// (seen-forwards.ts). Every refusal names its problem; the
// answer is 401 (400 for a malformed tenant header, 429 when the site's replay share is full).

import { verify, type KeyObject } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { httpbis } from 'http-message-signatures';
import { FORWARDED_BY } from './forwarded-by.ts';
import type { ForwardRejection } from './forward-refusal.ts';
import {
  NONCE_RULE,
  SIGNATURE_LABEL,
  SIGNATURE_PARAMS,
  SIGNED_COMPONENTS,
  SIGNED_COMPONENTS_WITH_TENANT,
} from './forward-signature.ts';
import { decodeTenantHeader, TENANT_HEADER, type ForwardTenantClaim } from './forward-tenant.ts';
import { siteTargetUrl } from './forward-url.ts';
import { claimFor, type ForwardClaim, type ReplayGuard } from './seen-forwards.ts';

export type ForwardVerdict =
  | {
      readonly ok: true;
      readonly site: string;
      /** The tenant the sending site states it forwards for (signed); absent = none stated. */
      readonly tenant?: ForwardTenantClaim;
      /** The signature's one use, to claim once the forward is admitted (ReplayGuard.claim). */
      readonly claim: ForwardClaim;
    }
  | {
      readonly ok: false;
      readonly rejection: ForwardRejection;
      readonly detail: string;
      /** The claimed site when it is pinned (a bounded label). */
      readonly site: string | undefined;
      readonly retryAfterSeconds?: number | undefined;
    };

export interface ForwardHead {
  readonly method: string;
  /** The request-target's path and query, as the request line gave them (origin-form: `/path?query`). */
  readonly target: string;
  readonly headers: IncomingHttpHeaders;
}

export interface VerifyContext {
  readonly pins: ReadonlyMap<string, KeyObject>;
  /** Wall-clock ms (the injected clock's `now()`). */
  readonly nowMs: number;
  readonly maxClockSkewMs: number;
  /** This site's id: a forward claiming it is refused. */
  readonly self: string;
  /** This site's public key once loaded: a forward signed with it is refused, whatever site it names. */
  readonly selfKey: KeyObject | undefined;
  /** This site's `[mesh] url`: the authority (and path prefix) every forward to it was signed for. */
  readonly url: string;
  /** Holds each accepted signature for its request (the request path uses or releases it). */
  readonly replay: Pick<ReplayGuard, 'hold'>;
}

/** Whether the head claims to be forwarded or signed, and so must be verified (cheap: three lookups). */
export function claimsForward(headers: IncomingHttpHeaders): boolean {
  return headers[FORWARDED_BY] !== undefined || headers.signature !== undefined || headers['signature-input'] !== undefined;
}

/** Longer than any real skew: the package's own time checks use Date.now(); ours use the injected clock. */
const NO_PACKAGE_TIME_CHECK_S = 100 * 365 * 24 * 3600;

interface SeenParams {
  keyid?: unknown;
  created?: unknown;
  expires?: unknown;
  nonce?: unknown;
}

export async function verifyForward(head: ForwardHead, ctx: VerifyContext): Promise<ForwardVerdict> {
  const by = single(head.headers[FORWARDED_BY]);
  const input = single(head.headers['signature-input']);
  const signature = single(head.headers.signature);
  // The claimed site labels the refusal only when it is pinned (a bounded set); it proves nothing.
  const claimed = by !== undefined && ctx.pins.has(by) && by !== ctx.self ? by : undefined;
  const reject = (rejection: ForwardRejection, detail: string, site = claimed): ForwardVerdict => ({
    ok: false,
    rejection,
    detail,
    site,
  });
  if (by === undefined) return reject('unsigned', `no single ${FORWARDED_BY} header`);
  if (input === undefined || signature === undefined) return reject('unsigned', 'no Signature-Input and Signature headers');
  if (single(head.headers['content-digest']) === undefined) return reject('unsigned', 'no Content-Digest header');
  if (by === ctx.self)
    return reject('own_site', `the request names this site ('${by}') as its sender: a site never forwards to itself`);
  const pinned = ctx.pins.get(by);
  if (pinned === undefined) return reject('unknown_site', `site '${by}' is not pinned in [[mesh.sites]]`);
  if (ctx.selfKey?.equals(pinned) === true) return reject('own_site', `the key pinned for '${by}' is this site's own key`, by);
  if (!input.trimStart().startsWith(`${SIGNATURE_LABEL}=`))
    return reject('bad_signature', `no signature labelled '${SIGNATURE_LABEL}'`, by);
  // What was signed is rebuilt from this site's own url and the request line: never from Host.
  const url = siteTargetUrl(ctx.url, head.target);
  if (url === undefined)
    return reject('bad_signature', `the request-target is not a path this site's url '${ctx.url}' can be signed for`, by);

  const seen: SeenParams[] = [];
  let verified: boolean | null;
  try {
    verified = await httpbis.verifyMessage(
      {
        keyLookup: (params) => {
          seen.push({ keyid: params.keyid, created: params.created, expires: params.expires, nonce: params.nonce });
          if (params.keyid !== by) return Promise.resolve(null);
          return Promise.resolve({
            id: by,
            algs: ['ed25519'],
            verify: (data: Buffer, sig: Buffer) => Promise.resolve(verify(null, data, pinned, sig)),
          });
        },
        // A tenant header the signature does not cover is refused like any other tampering.
        requiredFields: [...(head.headers[TENANT_HEADER] === undefined ? SIGNED_COMPONENTS : SIGNED_COMPONENTS_WITH_TENANT)],
        requiredParams: [...SIGNATURE_PARAMS],
        tolerance: NO_PACKAGE_TIME_CHECK_S,
      },
      { method: head.method, url: url.href, headers: stringHeaders(head.headers) },
    );
  } catch (error) {
    return reject('bad_signature', error instanceof Error ? error.message : String(error), by);
  }
  if (seen.length !== 1) return reject('bad_signature', `exactly one signature expected, got ${seen.length}`, by);
  const params = seen[0] ?? {};
  if (params.keyid !== by)
    return reject('bad_signature', `keyid '${String(params.keyid)}' is not the forwarding site '${by}'`, by);
  if (verified !== true)
    return reject(
      'bad_signature',
      `the signature does not verify against the key pinned for '${by}' (signed for another site, path or body?)`,
      by,
    );
  const times = judgeTimes(params, ctx);
  if (!times.ok) return reject('expired', times.detail, by);
  const nonce = params.nonce;
  if (typeof nonce !== 'string' || !NONCE_RULE.test(nonce))
    return reject('bad_signature', 'the nonce must be 16 to 64 base64url characters', by);
  const stated = head.headers[TENANT_HEADER];
  const tenant = stated === undefined ? undefined : decodeTenantHeader(stated);
  if (tenant?.ok === false) return reject('malformed_tenant', tenant.detail, by);
  const claim = claimFor(by, nonce, times.createdMs, times.expiresMs, ctx.maxClockSkewMs);
  const usable = await ctx.replay.hold(claim);
  if (!usable.ok)
    return {
      ok: false,
      rejection: usable.rejection,
      detail: usable.detail,
      site: by,
      retryAfterSeconds: usable.retryAfterSeconds,
    };
  return tenant === undefined ? { ok: true, site: by, claim } : { ok: true, site: by, tenant: tenant.claim, claim };
}

type Times =
  { readonly ok: true; readonly createdMs: number; readonly expiresMs: number } | { readonly ok: false; readonly detail: string };

/**
 * `created` within the skew window either way, `expires` not past (seconds, as RFC 9421 states
 * them). How long it stays acceptable is replay-window.ts's.
 */
export function judgeTimes(
  params: { created?: unknown; expires?: unknown },
  ctx: Pick<VerifyContext, 'nowMs' | 'maxClockSkewMs'>,
): Times {
  const created = seconds(params.created);
  const expires = seconds(params.expires);
  const now = ctx.nowMs / 1000;
  const skew = ctx.maxClockSkewMs / 1000;
  if (created === undefined || expires === undefined) return { ok: false, detail: 'created and expires are required' };
  if (created > now + skew)
    return { ok: false, detail: `created ${Math.round(created - now)} s in the future (max_clock_skew ${skew} s)` };
  if (created < now - skew) return { ok: false, detail: `created ${Math.round(now - created)} s ago (max_clock_skew ${skew} s)` };
  if (expires < now) return { ok: false, detail: `expired ${Math.round(now - expires)} s ago` };
  return { ok: true, createdMs: created * 1000, expiresMs: expires * 1000 };
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
