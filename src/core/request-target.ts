// Pure: the path and query of an HTTP request-target, or the reason it is malformed.
//
// node:http (llhttp) accepts request-targets that the WHATWG URL parser rejects (`//[/`,
// `//a:99999/`, `http://[/`, `//%/`): parsing one with `new URL(target, base)` throws. Every server
// here takes its target through this function, so a malformed one is a 400, never an exception.

/** What a handler reads of its request's target (a `URL` has it too). */
export interface TargetUrl {
  /** As the WHATWG URL parser gives it (dot segments resolved, unsafe characters percent-encoded). */
  readonly pathname: string;
  /** `?query`, or '' when there is none (or only a bare `?`). */
  readonly search: string;
  readonly searchParams: URLSearchParams;
}

export type RequestTarget =
  /** `url` carries the path and query: a `URL` (with a placeholder origin unless the target was absolute) or a plain path. */
  { readonly ok: true; readonly url: TargetUrl } | { readonly ok: false; readonly problem: string };

/** Longest target quoted back in a problem (the target is the client's, and may be huge). */
const QUOTED_CHARS = 80;

function malformed(target: string, why: string): RequestTarget {
  const shown = target.length > QUOTED_CHARS ? `${target.slice(0, QUOTED_CHARS)}…` : target;
  return { ok: false, problem: `malformed request target ${JSON.stringify(shown)}: ${why}` };
}

/**
 * Origin-form (`/path?query`, RFC 9112 §3.2.1) and absolute-form (`http://host/path`, §3.2.2) are
 * accepted. A path that starts with `//` is refused: read as a URL reference it names a host, read
 * as a path its first segment is empty; no endpoint has such a path, and the ambiguity is how
 * request-smuggling tricks start. Asterisk-form and authority-form serve no endpoint here either.
 */
export function parseRequestTarget(target: string | undefined): RequestTarget {
  const raw = target ?? '/';
  if (raw.startsWith('//')) return malformed(raw, 'a path must not start with "//"');
  if (PLAIN_ORIGIN_FORM.test(raw) && !DOT_SEGMENT.test(raw)) return { ok: true, url: new PlainTarget(raw) };
  if (raw.startsWith('/')) return parsed(raw, 'http://request-target.invalid' + raw);
  if (/^https?:\/\//i.test(raw)) return parsed(raw, raw);
  return malformed(raw, 'expected a path starting with "/" or an absolute http(s) URL');
}

/**
 * An origin-form target the URL parser would return unchanged (every request's, in practice): a path of
 * unreserved, sub-delim, `:` `@` `/` characters, no `%` and no `.`/`..` segment, and a query of those
 * plus `?` `%` and without `'` (which the parser encodes for http). Anything else takes the parser.
 */
const PLAIN_ORIGIN_FORM = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*(?:\?[A-Za-z0-9\-._~!$&()*+,;=:@/?%]*)?$/;
/** A `.` or `..` segment (anywhere: one in the query only sends the target to the parser). */
const DOT_SEGMENT = /\/\.\.?(?:[/?]|$)/;

/** A plain origin-form target's path and query, read without a `URL` (its query parsed when asked). */
class PlainTarget implements TargetUrl {
  readonly pathname: string;
  readonly search: string;
  #params: URLSearchParams | undefined;

  constructor(raw: string) {
    const query = raw.indexOf('?');
    this.pathname = query === -1 ? raw : raw.slice(0, query);
    this.search = query === -1 || query === raw.length - 1 ? '' : raw.slice(query);
  }

  get searchParams(): URLSearchParams {
    return (this.#params ??= new URLSearchParams(this.search));
  }
}

function parsed(raw: string, absolute: string): RequestTarget {
  // One parse per request (URL.parse answers null where `new URL` would throw).
  const url = URL.parse(absolute);
  return url === null ? malformed(raw, 'not a valid URL') : { ok: true, url };
}

/**
 * Why a request's Host header is not a plain `host[:port]` (RFC 9110 §7.2: uri-host [":" port]),
 * or undefined when it is (or absent, or empty). llhttp lets `/ ? # @` and spaces through; a Host
 * like `a:1/v1/chat#` must never reach code that builds a URL from it. A repeated Host is refused too.
 */
export function hostProblem(rawHeaders: readonly string[]): string | undefined {
  let host: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    // Lower-cased only when it may be `host` (four letters): no string is made for every other name.
    const name = rawHeaders[i] ?? '';
    if (name.length !== 4 || name.toLowerCase() !== 'host') continue;
    if (host !== undefined) return 'more than one Host header';
    host = rawHeaders[i + 1] ?? '';
  }
  if (host === undefined || host === '' || PLAIN_HOST.test(host)) return undefined;
  const shown = host.length > QUOTED_CHARS ? `${host.slice(0, QUOTED_CHARS)}…` : host;
  return `malformed Host header ${JSON.stringify(shown)}: expected host[:port]`;
}

/** A reg-name or IPv4 address, or a bracketed IPv6 literal, then an optional port. */
const PLAIN_HOST = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+(?::[0-9]{0,5})?$|^\[[0-9A-Fa-f:.]+\](?::[0-9]{0,5})?$/;
