// `[server] cors_origins`: which browser origins may call the public endpoints (CORS). Off by
// default (an empty list); `"*"` allows every origin; otherwise a list of origins written exactly as
// browsers send them in `Origin` (scheme, host, port only when not the default: `https://app.example.com`).

import { z } from 'zod';
import { invalid, valid, type ParseResult } from './parse-result.ts';

/** `"*"` = every origin; a list = exactly those (empty = CORS off). */
export type CorsOrigins = '*' | readonly string[];

const ORIGIN_FORM = 'an origin such as "https://app.example.com" (scheme, host and port only)';

/** Pure: one origin as a browser serialises it, or why it is not one. */
export function parseOrigin(text: string): ParseResult<string> {
  if (text === '*') return invalid('"*" allows every origin on its own: write cors_origins = "*" instead of a list');
  if (text === 'null')
    return invalid('the "null" origin (sandboxed frames, file: pages) cannot be allowed, since every page can claim it');
  if (!URL.canParse(text)) return invalid(`must be ${ORIGIN_FORM}`);
  const url = new URL(text);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return invalid(`must be an http or https origin, ${ORIGIN_FORM}`);
  if (url.username !== '' || url.password !== '') return invalid(`must not carry credentials; ${ORIGIN_FORM}`);
  if (url.origin !== text) {
    return invalid(
      `must be written exactly as browsers send it: "${url.origin}" (no path, query or trailing slash; lowercase; default port left out)`,
    );
  }
  return valid(url.origin);
}

const LIST_ERROR = 'must be "*" (every origin) or an array of origins such as ["https://app.example.com"]';

/** `"*"`, or an array whose every entry is an origin (each problem at its own index). */
export const corsOriginsSchema = z.unknown().transform((value, ctx): CorsOrigins => {
  if (value === '*') return '*';
  if (!Array.isArray(value)) {
    ctx.issues.push({ code: 'custom', message: LIST_ERROR, input: value });
    return z.NEVER;
  }
  const origins: string[] = [];
  value.forEach((entry: unknown, index) => {
    const parsed = typeof entry === 'string' ? parseOrigin(entry) : invalid<string>(`must be ${ORIGIN_FORM}`);
    if (!parsed.ok) ctx.issues.push({ code: 'custom', path: [index], message: parsed.message, input: entry });
    else if (origins.includes(parsed.value))
      ctx.issues.push({ code: 'custom', path: [index], message: `"${parsed.value}" is listed twice`, input: entry });
    else origins.push(parsed.value);
  });
  return origins;
});
