// Pure: who may use an admin route, and from where. One decision per request, in this order:
//  1. Host: the admin routes answer only for a Host they expect (admin-host.ts) — a DNS-rebinding
//     page reaches the gateway under its own name and is refused (421), reads included.
//  2. For a change (reload, wake, model load/unload): refused when a page of another origin could
//     have sent it — Sec-Fetch-Site or Origin not the gateway's own, or a body that is not JSON
//     (admin-origin.ts) — whatever the token setting.
//  3. With an admin token set, every admin request must carry it. Without one, reads are open
//     (bind [admin] listen to a private address) and changes are taken only from a local client. A
//     same-host proxy makes every client look local (127.0.0.1), so a request that carries a
//     proxy's forwarding headers is never taken as local: behind a proxy, changes need the token.
// The dashboard's page and files ('page') pass step 1 only; /health asks whether a read would pass.

import type { IncomingHttpHeaders } from 'node:http';
import { hostVerdict, type ExpectedHostNames } from './admin-host.ts';
import { changeOriginProblem, type ChangeOriginFacts } from './admin-origin.ts';

/** Headers a reverse proxy adds to say whom it forwards for; any one marks a proxied request. */
export const PROXY_MARKER_HEADERS = [
  'forwarded',
  'x-forwarded-for',
  'x-real-ip',
  'x-forwarded-host',
  'x-forwarded-proto',
] as const;

export function cameThroughProxy(headers: IncomingHttpHeaders): boolean {
  return PROXY_MARKER_HEADERS.some((name) => headers[name] !== undefined);
}

/** What an admin route does: serves the dashboard's files (no fleet data), reads state, or changes it. */
export type AdminRouteKind = 'page' | 'read' | 'change';

export interface AdminRequestFacts extends ChangeOriginFacts {
  readonly route: AdminRouteKind;
  readonly tokenSet: boolean;
  /** The request carried the configured admin token. */
  readonly tokenMatches: boolean;
  /** The connection comes from a loopback address. */
  readonly fromLoopback: boolean;
  /** The request carries a proxy's forwarding headers. */
  readonly viaProxy: boolean;
  /** The names the gateway answers admin routes for, besides IP literals and loopback names. */
  readonly hostNames: ExpectedHostNames;
}

/** Which check refused: the error's code says it to the client. */
export type AdminRefusalCode =
  'unexpected_host' | 'cross_origin' | 'cross_site' | 'not_json' | 'token' | 'behind_proxy' | 'not_local';

export type AdminAccess =
  | { readonly allowed: true }
  | {
      readonly allowed: false;
      readonly status: 401 | 403 | 415 | 421;
      readonly code: AdminRefusalCode;
      readonly message: string;
    };

const ORIGIN_CODES = { origin: 'cross_origin', 'sec-fetch-site': 'cross_site', 'content-type': 'not_json' } as const;

export function adminAccess(facts: AdminRequestFacts): AdminAccess {
  const host = hostVerdict(facts.host, facts.hostNames);
  if (!host.expected) {
    return {
      allowed: false,
      status: 421,
      code: 'unexpected_host',
      message:
        `the admin routes do not answer for Host '${host.name}': only IP addresses, localhost and the names in ` +
        `[admin] hosts (and the listen addresses' names) are answered, so a page that rebinds its own DNS name to ` +
        `this gateway cannot read or change it. If '${host.name}' is this gateway's name, add it: [admin] hosts = ["${host.name}"]`,
    };
  }
  if (facts.route === 'page') return { allowed: true };
  if (facts.route === 'change') {
    const problem = changeOriginProblem(facts);
    if (problem !== undefined)
      return {
        allowed: false,
        status: problem.check === 'content-type' ? 415 : 403,
        code: ORIGIN_CODES[problem.check],
        message: problem.message,
      };
  }
  if (facts.tokenSet) {
    return facts.tokenMatches
      ? { allowed: true }
      : { allowed: false, status: 401, code: 'token', message: 'the admin token is missing or wrong' };
  }
  if (facts.route === 'read') return { allowed: true };
  if (facts.viaProxy) {
    return {
      allowed: false,
      status: 403,
      code: 'behind_proxy',
      message:
        'admin changes through a proxy need the admin token: this request carries forwarding headers ' +
        '(Forwarded, X-Forwarded-*, X-Real-IP), so its origin cannot be taken as local. Set [admin] token.',
    };
  }
  if (facts.fromLoopback) return { allowed: true };
  return {
    allowed: false,
    status: 403,
    code: 'not_local',
    message: 'admin changes are accepted only from loopback unless [admin] token is set',
  };
}
