// The receiving side of federation: a request carrying the forwarded-by header or a signature is
// verified before API-key auth (mesh/forwarding) — against this site's own url and the request's
// path and query, once per signature — and either refused 401 naming the problem or
// served as a forwarded request — authenticated by its signature, from local nodes only. Its body
// must then match the Content-Digest it was signed with.

import { createPublicKey } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import { GatewayError } from '#src/core/errors.ts';
import {
  claimsForward,
  digestMatches,
  FORWARD_REJECTIONS,
  FORWARDED_BY,
  verifyForward,
  type ForwardRejection,
  type ForwardVerdict,
  type MeshLink,
  type VerifyContext,
} from '#src/mesh/forwarding/index.ts';
import { sendError } from '../http/openai-error.ts';
import type { ProxyEvents } from '../request/proxy-events.ts';

/** A forwarded request whose signature verified: which pinned site sent it. */
export interface InboundForward {
  readonly site: string;
}

export interface ForwardInDeps {
  readonly mesh: MeshLink | undefined;
  readonly clock: Clock;
  readonly events: EventBus<ProxyEvents>;
}

/**
 * Whether the request must go through `verifyInbound`. Without [mesh] only the forwarded-by header
 * counts (one lookup; such a request is refused, never forwarded on); with it, any signature too.
 */
export function mustVerify(deps: ForwardInDeps, req: IncomingMessage): boolean {
  if (deps.mesh === undefined) return req.headers[FORWARDED_BY] !== undefined;
  return claimsForward(req.headers);
}

/**
 * Verifies the head; on success calls `serve` with the sending site, else answers 401. `url` is the
 * request-target as the server parsed it: its path and query are what the signature must cover.
 */
export async function verifyInbound(deps: ForwardInDeps, req: IncomingMessage, res: ServerResponse, url: URL, serve: (inbound: InboundForward) => Promise<void>): Promise<void> {
  const mesh = deps.mesh;
  const verdict: ForwardVerdict =
    mesh === undefined
      ? { ok: false, rejection: 'unknown_site', detail: 'this gateway has no [mesh] section: it accepts no forwarded requests', site: undefined }
      : await verifyForward({ method: req.method ?? 'POST', target: url.pathname + url.search, headers: req.headers }, verifyContext(mesh, deps.clock.now()));
  if (verdict.ok) return serve({ site: verdict.site });
  deps.events.emit('mesh:forwarded-in', { site: verdict.site ?? '_unknown', result: verdict.rejection });
  req.resume();
  sendError(res, forwardRefused(verdict.rejection, verdict.detail, verdict.retryAfterSeconds));
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

/** After the body is read: it must be the one signed. Counts the request accepted, or refuses it. */
export function acceptInboundBody(inbound: InboundForward, headers: IncomingMessage['headers'], body: Buffer, events: EventBus<ProxyEvents>): GatewayError | undefined {
  const header = headers['content-digest'];
  if (!digestMatches(typeof header === 'string' ? header : undefined, body)) {
    events.emit('mesh:forwarded-in', { site: inbound.site, result: 'digest_mismatch' });
    return forwardRefused('digest_mismatch', 'the body does not match its Content-Digest');
  }
  events.emit('mesh:forwarded-in', { site: inbound.site, result: 'accepted' });
  return undefined;
}

export function forwardRefused(rejection: ForwardRejection, detail: string, retryAfterSeconds?: number): GatewayError {
  if (rejection === 'replay_memory_full') {
    // Not the sender's fault: a retry (or another site) will do.
    return new GatewayError('GW_NO_AVAILABLE_NODE', `${FORWARD_REJECTIONS[rejection]}: ${detail}`, {
      status: 503,
      openaiType: 'server_error',
      openaiCode: rejection,
      retryAfterSeconds: retryAfterSeconds ?? 1,
    });
  }
  return new GatewayError('GW_UNAUTHORIZED', `${FORWARD_REJECTIONS[rejection]}: ${detail}`, {
    status: 401,
    openaiType: 'authentication_error',
    openaiCode: rejection,
  });
}
