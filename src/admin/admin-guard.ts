// The admin access check as HTTP sees it: the facts of one request's head (Host, Origin,
// Sec-Fetch-Site, Content-Type, token, loopback, proxy headers) go to the pure adminAccess()
// decision, and a refused request is answered 401, 403, 415 or 421 naming the check.

import type { IncomingMessage } from 'node:http';
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import { GatewayError } from '#src/core/errors.ts';
import { isLoopbackAddress, presentedKey, rotatingKeyCheck, sendError, unauthorized } from '#src/proxy/index.ts';
import { adminAccess, cameThroughProxy, type AdminAccess, type AdminRouteKind } from './admin-access.ts';
import type { ExpectedHostNames } from './admin-host.ts';
import type { AdminDeps, Guard } from './admin-deps.ts';

export function forbidden(message: string): GatewayError {
  return new GatewayError('GW_UNAUTHORIZED', message, {
    status: 403,
    openaiType: 'authentication_error',
    openaiCode: 'forbidden',
  });
}

/** A refusal as the error the client gets (the token and local rules keep the codes they always had). */
function refusal(access: Extract<AdminAccess, { allowed: false }>): GatewayError {
  if (access.code === 'token') return unauthorized(access.message);
  if (access.code === 'behind_proxy' || access.code === 'not_local') return forbidden(access.message);
  const type = access.status === 415 ? 'invalid_request_error' : 'authentication_error';
  return new GatewayError(access.status === 415 ? 'GW_BAD_REQUEST' : 'GW_FORBIDDEN', access.message, {
    status: access.status,
    openaiType: type,
    openaiCode: access.code,
  });
}

export interface AdminGuard {
  readonly guard: Guard;
  /** Whether the request may read admin views (for answers that differ, rather than refuse). */
  readonly mayRead: (req: IncomingMessage) => boolean;
  /** Whether the request may change state (reload, wake, model load), and if not why: the dashboard shows its buttons by it. */
  readonly mayAct: (req: IncomingMessage) => AdminAccess;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The request has a body: a Content-Length above 0, or a chunked one. */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export function adminGuard(config: AdminDeps['config']): AdminGuard {
  const adminTokenOk = rotatingKeyCheck(() => {
    const token = config().admin.token;
    return token === undefined ? [] : [token];
  });
  // Read once: the machine's name does not change under a running gateway.
  const machine = hostname();
  const hostNames = (): ExpectedHostNames => {
    const { admin, server } = config();
    const listen = [server.listen.host, ...(admin.listen === undefined ? [] : [admin.listen.host])].filter(
      (host) => isIP(host) === 0,
    );
    return { configured: admin.hosts, listen, machine };
  };
  const accessOf = (req: IncomingMessage, route: AdminRouteKind): AdminAccess =>
    adminAccess({
      route,
      host: req.headers.host,
      origin: single(req.headers.origin),
      fetchSite: single(req.headers['sec-fetch-site']),
      contentType: req.headers['content-type'],
      hasBody: hasBody(req),
      hostNames: hostNames(),
      tokenSet: config().admin.token !== undefined,
      tokenMatches: adminTokenOk(presentedKey(req.headers)),
      fromLoopback: isLoopbackAddress(req.socket.remoteAddress),
      viaProxy: cameThroughProxy(req.headers),
    });
  const guard: Guard = (route, handler) => (req, res, url) => {
    const access = accessOf(req, route);
    if (access.allowed) return handler(req, res, url);
    req.resume();
    sendError(res, refusal(access));
  };
  return { guard, mayRead: (req) => accessOf(req, 'read').allowed, mayAct: (req) => accessOf(req, 'change') };
}
