// Pure: the request features a selection policy may read, read from one request (routing/ says
// which its policy reads: `requestFeaturesFor`). The affinity key is the configured header's value,
// else the body's `user` field, else the first N characters of the prompt (prefix affinity: requests
// that open alike go alike), prefixed by source so a header value never collides with a user name.
// The prompt prefix is the prompt's text from its start (what a prefix cache holds).

import type { IncomingHttpHeaders } from 'node:http';
import type { FeatureReaders } from '#src/routing/index.ts';
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

/** Each feature's reader over one request; nothing is read until routing asks for a feature. */
export function featureReaders(
  headers: IncomingHttpHeaders,
  endpoint: string,
  json: Readonly<Record<string, unknown>>,
  settings: AffinitySettings,
): FeatureReaders {
  return {
    affinityKey: () => affinityKeyOf(headers, endpoint, json, settings),
    promptPrefix: () => promptPrefixOf(endpoint, json, settings.cachePromptChars),
  };
}
