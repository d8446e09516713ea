// Where a forwarded request goes and what its signature covers: `<site url><request-target>`, the
// site url's path prefix kept. The sender builds it from the receiving site's record; the receiver
// rebuilds it from its own `[mesh] url` and the request-target of the request line — never from the
// client's Host header, so a signature made for one site does not verify at another.

/**
 * `siteUrl` with `target` (origin-form: `/path?query`) appended to its path; undefined when the url
 * is not http(s) or the target is not origin-form (`//x` would name a host, not a path).
 */
export function siteTargetUrl(siteUrl: string, target: string): URL | undefined {
  if (!target.startsWith('/') || target.startsWith('//')) return undefined;
  let base: URL;
  try {
    base = new URL(siteUrl);
  } catch {
    return undefined;
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') return undefined;
  const prefix = base.pathname.endsWith('/') ? base.pathname.slice(0, -1) : base.pathname;
  try {
    return new URL(`${base.origin}${prefix}${target}`);
  } catch {
    return undefined;
  }
}
