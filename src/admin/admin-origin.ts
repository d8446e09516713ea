// Pure: whether an admin change could have been sent by a page of another origin (CSRF). A browser
// names the page that sent a request in `Origin` (on every POST) and `Sec-Fetch-Site`; a client
// that is not a browser (curl, the CLI) sends neither, and is judged by the token and loopback
// rules alone. A change must also declare a JSON body: an HTML form can post only
// `application/x-www-form-urlencoded`, `multipart/form-data` or `text/plain`, and a script of
// another origin cannot send `application/json` without a preflight, which the admin routes never
// answer.

/** What the request head says about where it came from and what it carries. */
export interface ChangeOriginFacts {
  /** The Host header ('' or undefined when absent). */
  readonly host: string | undefined;
  readonly origin: string | undefined;
  readonly fetchSite: string | undefined;
  readonly contentType: string | undefined;
  /** The request has a body (Content-Length above 0, or Transfer-Encoding). */
  readonly hasBody: boolean;
}

export type OriginProblem =
  | { readonly check: 'origin'; readonly message: string }
  | { readonly check: 'sec-fetch-site'; readonly message: string }
  | { readonly check: 'content-type'; readonly message: string };

/** Sec-Fetch-Site values a page of another origin cannot produce: the gateway's own page, and a user's own navigation. */
const OWN_FETCH_SITES: ReadonlySet<string> = new Set(['same-origin', 'none']);

/** `scheme://host[:port]` of an Origin, default port left out (as a browser sends it), or undefined when it is not one. */
function originAuthority(origin: string): { readonly scheme: 'http' | 'https'; readonly authority: string } | undefined {
  const url = URL.parse(origin);
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) return undefined;
  if (url.pathname !== '/' || url.search !== '' || url.username !== '' || url.password !== '') return undefined;
  return { scheme: url.protocol === 'http:' ? 'http' : 'https', authority: url.host };
}

/** The Host header as an authority comparable to URL.host: lowercased, the scheme's default port left out. */
function hostAuthority(host: string, scheme: 'http' | 'https'): string {
  const lower = host.trim().toLowerCase();
  const defaultPort = scheme === 'http' ? ':80' : ':443';
  return lower.endsWith(defaultPort) ? lower.slice(0, -defaultPort.length) : lower;
}

/**
 * Whether `origin` is the gateway's own: the same host and port as the request's Host. The
 * scheme is not compared — the gateway serves plain HTTP, and behind a TLS proxy that passes Host
 * through its own page's origin is `https://` with the same authority.
 */
export function isOwnOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined || host === '') return false;
  const parsed = originAuthority(origin);
  return parsed !== undefined && parsed.authority === hostAuthority(host, parsed.scheme);
}

/** Whether a Content-Type is JSON: `application/json`, with or without parameters (`; charset=utf-8`). */
export function isJsonContentType(contentType: string): boolean {
  const semicolon = contentType.indexOf(';');
  const media = (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return media === 'application/json';
}

/** The first reason a change may come from another origin's page, or undefined when none does. */
export function changeOriginProblem(facts: ChangeOriginFacts): OriginProblem | undefined {
  if (facts.fetchSite !== undefined && !OWN_FETCH_SITES.has(facts.fetchSite.trim().toLowerCase())) {
    return {
      check: 'sec-fetch-site',
      message: `admin changes are taken only from the gateway's own page: this request's Sec-Fetch-Site is '${shown(facts.fetchSite)}' (a page of another origin sent it), not 'same-origin'`,
    };
  }
  if (facts.origin !== undefined && !isOwnOrigin(facts.origin, facts.host)) {
    return {
      check: 'origin',
      message: `admin changes are taken only from the gateway's own page: this request's Origin '${shown(facts.origin)}' is not this gateway (Host '${shown(facts.host ?? '')}')`,
    };
  }
  if (facts.contentType !== undefined ? !isJsonContentType(facts.contentType) : facts.hasBody) {
    return {
      check: 'content-type',
      message: `admin changes take a JSON body: Content-Type must be application/json, not ${facts.contentType === undefined ? 'missing' : `'${shown(facts.contentType)}'`} (a body-less change may leave it out)`,
    };
  }
  return undefined;
}

/** A header value quoted back in a message: bounded, and only printable ASCII. */
function shown(value: string): string {
  const printable = value.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > 100 ? `${printable.slice(0, 100)}…` : printable;
}
