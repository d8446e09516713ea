// Pure: the key the `affinity` policy hashes for one request — the configured header's value, else
// the body's `user` field, else the first N characters of the prompt (prefix affinity: requests
// that open alike go alike). Prefixed by source so a header value never collides with a user name.

import type { IncomingHttpHeaders } from 'node:http';
import { promptText } from './prompt-size.ts';

export interface AffinitySettings {
  /** Lower-case header name, e.g. "x-session-id". */
  readonly affinityHeader: string;
  readonly affinityPrefixChars: number;
  /** `cache-aware`: prompt characters considered. */
  readonly cachePromptChars: number;
}

export function affinityKeyOf(
  headers: IncomingHttpHeaders,
  endpoint: string,
  json: Readonly<Record<string, unknown>>,
  settings: AffinitySettings,
): string | undefined {
  const header = headers[settings.affinityHeader];
  const value = Array.isArray(header) ? header[0] : header;
  if (value !== undefined && value !== '') return `header:${value}`;
  if (typeof json.user === 'string' && json.user !== '') return `user:${json.user}`;
  const prefix = promptText(endpoint, json).pieces.join('\n').slice(0, settings.affinityPrefixChars);
  return prefix === '' ? undefined : `prefix:${prefix}`;
}

/** The prompt's text from its start, up to `maxChars` (what `cache-aware` matches); undefined = none. */
export function promptPrefixOf(endpoint: string, json: Readonly<Record<string, unknown>>, maxChars: number): string | undefined {
  const text = promptText(endpoint, json).pieces.join('\n').slice(0, maxChars);
  return text === '' ? undefined : text;
}
