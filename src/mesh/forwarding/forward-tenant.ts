// The tenant a forwarding site states for a forward: `x-switchyard-tenant`, an RFC 8941 Item — the
// tenant's name as an sf-string, its class as the `class` parameter (an sf-token):
//
//   x-switchyard-tenant: "team-a";class=interactive
//
// Sent by a site whose request has a tenant (an open gateway sends none) and covered by the forward's
// RFC 9421 signature. The receiver records it for accounting and caps the class by the sending
// site's own `[[mesh.sites]] tenant` (proxy/sites/inbound-tenant.ts); it grants nothing by itself.
// Pure: encoding and a strict decoding (anything this side would not send is refused, by name).

import { isSiteId } from '#src/mesh/config/mesh-config.ts';
import { TENANT_PRIORITIES, type TenantPriority } from '#src/core/tenant-class.ts';

export const TENANT_HEADER = 'x-switchyard-tenant';

/** The tenant a forward is sent for, as the forwarding site states it. */
export interface ForwardTenantClaim {
  readonly name: string;
  readonly priority: TenantPriority;
}

export type TenantHeaderVerdict =
  { readonly ok: true; readonly claim: ForwardTenantClaim } | { readonly ok: false; readonly detail: string };

/** Longest header value read (a name is at most 64 characters; room for later parameters). */
export const MAX_TENANT_HEADER_CHARS = 256;

/** The header's value for `claim` (tenant names keep to the node-name rule: nothing to escape). */
export function encodeTenantHeader(claim: ForwardTenantClaim): string {
  return `${sfString(claim.name)};class=${claim.priority}`;
}

function sfString(text: string): string {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

const EXPECTED = `expected "<tenant>";class=<${TENANT_PRIORITIES.join('|')}>`;

/**
 * Reads the header as RFC 8941 §4.2.3 parses an Item whose bare item is a String: parameters other
 * than `class` are skipped (later senders may add some), `class` must be one of the classes, the
 * name must be a tenant name.
 */
export function decodeTenantHeader(value: string | readonly string[]): TenantHeaderVerdict {
  if (typeof value !== 'string') return { ok: false, detail: `sent ${value.length} times; exactly one expected` };
  if (value.length > MAX_TENANT_HEADER_CHARS) return { ok: false, detail: `longer than ${MAX_TENANT_HEADER_CHARS} characters` };
  const input = value.replace(/^ +| +$/g, '');
  const name = readString(input, 0);
  if (!name.ok) return { ok: false, detail: `${name.detail}; ${EXPECTED}` };
  const params = readParams(input, name.end);
  if (!params.ok) return { ok: false, detail: `${params.detail}; ${EXPECTED}` };
  // Tenant names keep to the rule site and node names do.
  if (!isSiteId(name.value))
    return { ok: false, detail: `tenant name "${printable(name.value)}" is not a tenant name (1-64 of A-Z a-z 0-9 . _ : @ -)` };
  const given = params.values.get('class');
  if (given === undefined) return { ok: false, detail: `no class parameter; ${EXPECTED}` };
  const priority = given.type === 'token' ? given.value : undefined;
  if (!isPriority(priority))
    return {
      ok: false,
      detail: `class must be one of ${TENANT_PRIORITIES.join(', ')} (a token), got ${printable(shown(given))}`,
    };
  return { ok: true, claim: { name: name.value, priority } };
}

function isPriority(value: unknown): value is TenantPriority {
  return typeof value === 'string' && (TENANT_PRIORITIES as readonly string[]).includes(value);
}

/** For messages: at most 64 characters of it, controls shown as `?`. */
function printable(text: string): string {
  return text.slice(0, 64).replace(/[^\x20-\x7e]/g, '?');
}

type Read<T> = { readonly ok: true; readonly value: T; readonly end: number } | { readonly ok: false; readonly detail: string };

function readString(input: string, start: number): Read<string> {
  if (input[start] !== '"') return { ok: false, detail: 'the value must start with a quoted tenant name' };
  let out = '';
  for (let i = start + 1; i < input.length; i++) {
    const c = input.charCodeAt(i);
    if (c === 0x5c) {
      const next = input[i + 1];
      if (next !== '"' && next !== '\\') return { ok: false, detail: 'a backslash in the name escapes only " or \\' };
      out += next;
      i++;
    } else if (c === 0x22) return { ok: true, value: out, end: i + 1 };
    else if (c < 0x20 || c > 0x7e) return { ok: false, detail: 'the name holds a character outside printable ASCII' };
    else out += input[i];
  }
  return { ok: false, detail: 'the quoted name is not closed' };
}

/** The bare items a parameter may hold here (§4.2.3.1): decimals and byte sequences are refused. */
type BareItem =
  | { readonly type: 'token'; readonly value: string }
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'integer'; readonly value: number }
  | { readonly type: 'boolean'; readonly value: boolean };

function shown(item: BareItem): string {
  if (item.type === 'string') return `the string "${item.value}"`;
  if (item.type === 'boolean') return item.value ? '?1' : '?0';
  return String(item.value);
}

function readParams(input: string, start: number): { ok: true; values: Map<string, BareItem> } | { ok: false; detail: string } {
  const values = new Map<string, BareItem>();
  let i = start;
  while (i < input.length) {
    if (input[i] !== ';')
      return { ok: false, detail: `unexpected "${printable(input.slice(i, i + 8))}" where ";" or the end belongs` };
    i++;
    while (input[i] === ' ') i++;
    const key = /^[a-z*][a-z0-9_.*-]*/.exec(input.slice(i))?.[0];
    if (key === undefined) return { ok: false, detail: 'a parameter name must start with a lower-case letter' };
    i += key.length;
    if (input[i] !== '=') {
      values.set(key, { type: 'boolean', value: true });
      continue;
    }
    const item = readBareItem(input, i + 1);
    if (!item.ok) return item;
    values.set(key, item.value);
    i = item.end;
  }
  return { ok: true, values };
}

function readBareItem(input: string, start: number): Read<BareItem> {
  const rest = input.slice(start);
  if (rest.startsWith('"')) {
    const text = readString(input, start);
    return text.ok ? { ok: true, value: { type: 'string', value: text.value }, end: text.end } : text;
  }
  if (rest.startsWith('?1') || rest.startsWith('?0'))
    return { ok: true, value: { type: 'boolean', value: rest[1] === '1' }, end: start + 2 };
  const integer = /^-?[0-9]{1,15}(?![0-9.])/.exec(rest)?.[0];
  if (integer !== undefined) return { ok: true, value: { type: 'integer', value: Number(integer) }, end: start + integer.length };
  const token = /^[A-Za-z*][A-Za-z0-9!#$%&'*+.^_`|~:/-]*/.exec(rest)?.[0];
  if (token !== undefined) return { ok: true, value: { type: 'token', value: token }, end: start + token.length };
  return { ok: false, detail: 'a parameter value must be a token, a string, an integer or a boolean' };
}
