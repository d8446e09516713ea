// The admin access check as HTTP sees it: the facts of one request (token, loopback, proxy headers)
// go to the pure adminAccess() decision, and a refused request is answered 401 or 403.

import type { IncomingMessage } from 'node:http';
import { GatewayError } from '#src/core/errors.ts';
import { isLoopbackAddress, presentedKey, rotatingKeyCheck, sendError, unauthorized } from '#src/proxy/index.ts';
import { adminAccess, cameThroughProxy, type AdminAccess } from './admin-access.ts';
import type { AdminDeps, Guard } from './admin-deps.ts';

export function forbidden(message: string): GatewayError {
  return new GatewayError('GW_UNAUTHORIZED', message, { status: 403, openaiType: 'authentication_error', openaiCode: 'forbidden' });
}

export interface AdminGuard {
  readonly guard: Guard;
  /** Whether the request may read admin views (for answers that differ, rather than refuse). */
  readonly mayRead: (req: IncomingMessage) => boolean;
  /** Whether the request may change state (reload, wake, model load), and if not why: the dashboard shows its buttons by it. */
  readonly mayAct: (req: IncomingMessage) => AdminAccess;
}

export function adminGuard(config: AdminDeps['config']): AdminGuard {
  const adminTokenOk = rotatingKeyCheck(() => {
    const token = config().admin.token;
    return token === undefined ? [] : [token];
  });
  const accessOf = (req: IncomingMessage, mutation: boolean): AdminAccess =>
    adminAccess({
      tokenSet: config().admin.token !== undefined,
      tokenMatches: adminTokenOk(presentedKey(req.headers)),
      mutation,
      fromLoopback: isLoopbackAddress(req.socket.remoteAddress),
      viaProxy: cameThroughProxy(req.headers),
    });
  const guard: Guard = (mutation, handler) => (req, res, url) => {
    const access = accessOf(req, mutation);
    if (access.allowed) return handler(req, res, url);
    req.resume();
    sendError(res, access.status === 401 ? unauthorized(access.message) : forbidden(access.message));
  };
  return { guard, mayRead: (req) => accessOf(req, false).allowed, mayAct: (req) => accessOf(req, true) };
}
