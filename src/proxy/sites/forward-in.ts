// The receiving side of federation: a request carrying the forwarded-by header or a signature is
// verified before API-key auth (mesh/forwarding) — against this site's own url and the request's
// path and query, once per signature — and either refused 401 naming the problem or
// served as a forwarded request — authenticated by its signature, from local nodes only, admitted
// as the sending site's `[[mesh.sites]] tenant` (inbound-tenant.ts). Its body must then match the
// Content-Digest it was signed with, and its signature is used up (the replay memory's claim) only
// once the request is admitted within that tenant's limits: a forward refused before that costs
// no replay entry, and of two copies of one signature racing only one is served.

import { createPublicKey } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { GatewayError } from '#src/core/errors.ts';
import type { TargetUrl } from '#src/core/request-target.ts';
import {
  digestMatches,
  forwardRefused,
  verifyForward,
  type ForwardClaim,
  type ForwardTenantClaim,
  type ForwardVerdict,
  type MeshLink,
  type ReplayGuard,
  type VerifyContext,
} from '#src/mesh/forwarding/index.ts';
import type { MeshSitePin } from '#src/mesh/config/mesh-config.ts';
import type { TenantPriority } from '#src/core/tenant-class.ts';
import type { TenantSpec } from './inbound-tenant.ts';
import type { QueueTenant } from '#src/routing/index.ts';
import { sendError } from '../http/openai-error.ts';
import type { ProxyEvents } from '../request/proxy-events.ts';
import { inboundTenant } from './inbound-tenant.ts';

/** A forwarded request whose signature verified: which pinned site sent it, and whose request it is. */
export interface InboundForward {
  readonly site: string;
  /** The tenant the sending site states (its signed tenant header): for accounting only; undefined = none stated. */
  readonly claimedTenant: string | undefined;
  readonly claimedClass: TenantPriority | undefined;
  /** The tenant the request is admitted as: the site's `[[mesh.sites]] tenant`; undefined = none (no tenant limits). */
  readonly tenant: TenantSpec | undefined;
  /** Its place in the queues: that tenant, the class capped by the stated one (RouteRequest.tenant). */
  readonly queue: QueueTenant;
  /**
   * Uses up the signature (once admitted, before anything is served): undefined = used, this
   * request may go on; else the refusal to answer (a copy that won the race: `replayed`; the
   * site's replay share full: 429).
   */
  readonly useSignature: () => Promise<GatewayError | undefined>;
}

/** What the receiving side reads of the config in force: the pins (with their tenants) and the tenants. */
export interface PeerTenancy {
  readonly pins: readonly MeshSitePin[];
  readonly tenants: readonly TenantSpec[];
}

export interface ForwardInDeps {
  readonly mesh: MeshLink;
  readonly clock: Clock;
  readonly events: EventBus<ProxyEvents>;
  /** Read once per verified forward, so a reload's pins and tenants apply to the next one. */
  readonly tenancy: () => PeerTenancy;
}

/**
 * Verifies the head; on success calls `serve` with the sending site, else answers 401. `url` is the
 * request-target as the server parsed it: its path and query are what the signature must cover.
 */
export async function verifyInbound(
  deps: ForwardInDeps,
  req: IncomingMessage,
  res: ServerResponse,
  url: TargetUrl,
  serve: (inbound: InboundForward) => unknown,
): Promise<void> {
  const mesh = deps.mesh;
  const verdict = await verifyForward(
    { method: req.method ?? 'POST', target: url.pathname + url.search, headers: req.headers },
    verifyContext(mesh, deps.clock.now()),
  );
  if (!verdict.ok) return refuse(deps, req, res, verdict);
  const { claim } = verdict;
  const inbound = inboundForward(verdict.site, verdict.tenant, deps.tenancy());
  let used = false;
  try {
    await serve({
      ...inbound,
      useSignature: async () => {
        const refused = await useSignature(mesh.replay, claim, inbound, deps.events);
        used = refused === undefined;
        return refused;
      },
    });
  } finally {
    // Refused before its signature was used (its tenant's limits, its body): the signature is let go.
    if (!used) mesh.replay.release(claim);
  }
}

function refuse(
  deps: ForwardInDeps,
  req: IncomingMessage,
  res: ServerResponse,
  verdict: Extract<ForwardVerdict, { ok: false }>,
): void {
  deps.events.emit('mesh:forwarded-in', { site: verdict.site ?? '_unknown', result: verdict.rejection });
  req.resume();
  sendError(res, forwardRefused(verdict.rejection, verdict.detail, verdict.retryAfterSeconds));
}

/** The verified sender as the request path uses it: the site, the tenant it states, the tenant it is admitted as. */
export function inboundForward(
  site: string,
  claimed: ForwardTenantClaim | undefined,
  tenancy: PeerTenancy,
): Omit<InboundForward, 'useSignature'> {
  // The pins the signature was verified against are the same config's: a pin that vanished in
  // between (a reload) leaves the site without a tenant, as an unpinned site would have been refused.
  const pin = tenancy.pins.find((p) => p.id === site) ?? { id: site, tenant: undefined };
  const { tenant, queue } = inboundTenant(pin, claimed, tenancy.tenants);
  return { site, claimedTenant: claimed?.name, claimedClass: claimed?.priority, tenant, queue };
}

/**
 * Claims the signature's one use: counted `accepted` (with how it is admitted), or refused under
 * its code and returned to answer. A forward refused before (its tenant's limits, a body this side
 * refuses) is counted by the request's own answer, not here: its signature was never used.
 */
async function useSignature(
  replay: ReplayGuard,
  claim: ForwardClaim,
  inbound: Omit<InboundForward, 'useSignature'>,
  events: EventBus<ProxyEvents>,
): Promise<GatewayError | undefined> {
  const verdict = await replay.claim(claim);
  if (verdict.ok) {
    const admitted = { tenant: inbound.queue.name, priority: inbound.queue.priority, claimedClass: inbound.claimedClass };
    events.emit('mesh:forwarded-in', { site: inbound.site, result: 'accepted', admitted });
    return undefined;
  }
  events.emit('mesh:forwarded-in', { site: inbound.site, result: verdict.rejection });
  return forwardRefused(verdict.rejection, verdict.detail, verdict.retryAfterSeconds);
}

function verifyContext(mesh: MeshLink, nowMs: number): VerifyContext {
  const key = mesh.key();
  return {
    pins: mesh.pins(),
    nowMs,
    maxClockSkewMs: mesh.maxClockSkewMs(),
    self: mesh.site,
    selfKey: key === undefined ? undefined : createPublicKey(key.privateKey),
    url: mesh.url(),
    replay: mesh.replay,
  };
}

/** After the body is read: it must be the one signed, or the request is refused (and counted so). */
export function acceptInboundBody(
  inbound: InboundForward,
  headers: IncomingMessage['headers'],
  body: Buffer,
  events: EventBus<ProxyEvents>,
): GatewayError | undefined {
  const header = headers['content-digest'];
  if (digestMatches(typeof header === 'string' ? header : undefined, body)) return undefined;
  events.emit('mesh:forwarded-in', { site: inbound.site, result: 'digest_mismatch' });
  return forwardRefused('digest_mismatch', 'the body does not match its Content-Digest');
}
