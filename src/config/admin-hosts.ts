// `[admin] hosts`: the DNS names the admin routes answer for (the Host header), besides IP
// addresses, localhost and the listen addresses' names, which are always answered
// (src/admin/admin-host.ts). A name as a browser sends it in Host: letters, digits, `-` and `.`,
// no scheme, port or path; compared case-insensitively, stored lowercase.

import { isIP } from 'node:net';
import { z } from 'zod';
import { invalid, valid, type ParseResult } from './parse-result.ts';

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const NAME_FORM = 'a DNS name such as "gw.example.com" (no scheme, port or path)';

/** Pure: one expected host name, lowercased, or why it is not one. */
export function parseAdminHost(text: string): ParseResult<string> {
  const name = text.toLowerCase().replace(/\.$/, '');
  if (isIP(name) !== 0 || isIP(name.replace(/^\[|\]$/g, '')) !== 0)
    return invalid('IP addresses are always answered: list DNS names only');
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(name)) return invalid(`must be ${NAME_FORM}; leave out the scheme`);
  if (name.includes(':')) return invalid(`must be ${NAME_FORM}; leave out the port (any port is answered)`);
  if (name.length === 0 || name.length > 253 || !name.split('.').every((label) => LABEL.test(label)))
    return invalid(`must be ${NAME_FORM}`);
  if (name === 'localhost' || name.endsWith('.localhost'))
    return invalid('localhost names are always answered: list other names only');
  return valid(name);
}

/** An array of names (each problem at its own index). */
export const adminHostsSchema = z.unknown().transform((value, ctx): readonly string[] => {
  if (!Array.isArray(value)) {
    ctx.issues.push({ code: 'custom', message: `must be an array of names such as ["gw.example.com"]`, input: value });
    return z.NEVER;
  }
  const names: string[] = [];
  value.forEach((entry: unknown, index) => {
    const parsed = typeof entry === 'string' ? parseAdminHost(entry) : invalid<string>(`must be ${NAME_FORM}`);
    if (!parsed.ok) ctx.issues.push({ code: 'custom', path: [index], message: parsed.message, input: entry });
    else if (names.includes(parsed.value))
      ctx.issues.push({ code: 'custom', path: [index], message: `"${parsed.value}" is listed twice`, input: entry });
    else names.push(parsed.value);
  });
  return names;
});
