// Pure: who may use an admin route. With an admin token set, every admin request must carry it.
// Without one, reads are open (bind [admin] listen to a private address) and changes are taken
// only from a local client. A same-host proxy makes every client look local (127.0.0.1), so a
// request that carries a proxy's forwarding headers is never taken as local: behind a proxy,
// changes need the token.

import type { IncomingHttpHeaders } from 'node:http';

/** Headers a reverse proxy adds to say whom it forwards for; any one marks a proxied request. */
export const PROXY_MARKER_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip', 'x-forwarded-host', 'x-forwarded-proto'] as const;

export function cameThroughProxy(headers: IncomingHttpHeaders): boolean {
  return PROXY_MARKER_HEADERS.some((name) => headers[name] !== undefined);
}

export interface AdminRequestFacts {
  readonly tokenSet: boolean;
  /** The request carried the configured admin token. */
  readonly tokenMatches: boolean;
  /** The request changes state (reload, wake) rather than reading it. */
  readonly mutation: boolean;
  /** The connection comes from a loopback address. */
  readonly fromLoopback: boolean;
  /** The request carries a proxy's forwarding headers. */
  readonly viaProxy: boolean;
}

export type AdminAccess =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly status: 401 | 403; readonly message: string };

export function adminAccess(facts: AdminRequestFacts): AdminAccess {
  if (facts.tokenSet) {
    return facts.tokenMatches ? { allowed: true } : { allowed: false, status: 401, message: 'the admin token is missing or wrong' };
  }
  if (!facts.mutation) return { allowed: true };
  if (facts.viaProxy) {
    return {
      allowed: false,
      status: 403,
      message:
        'admin changes through a proxy need the admin token: this request carries forwarding headers ' +
        '(Forwarded, X-Forwarded-*, X-Real-IP), so its origin cannot be taken as local. Set [admin] token.',
    };
  }
  if (facts.fromLoopback) return { allowed: true };
  return { allowed: false, status: 403, message: 'admin changes are accepted only from loopback unless [admin] token is set' };
}
