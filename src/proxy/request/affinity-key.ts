// Pure: the request features a selection policy may read, read from one request (routing/ says
// which its policy reads: `requestFeaturesFor`). The session key is what agents and SDKs send
// (session-key.ts), unless `[routing] sessions = false`. The affinity key is the session key, else
// the first N characters of the prompt (prefix affinity: requests that open alike go alike),
// prefixed by source so a header value never collides with a user name. The prompt prefix is the
// prompt's text from its start (what a prefix cache holds).

import type { IncomingHttpHeaders } from 'node:http';
import { sessionFeature, type FeatureReaders } from '#src/routing/index.ts';
import { promptText } from './prompt-size.ts';
import { previousResponseOf, sessionKeyOf, type SessionKey } from './session-key.ts';

export interface AffinitySettings {
  /** Lower-case header name, e.g. "x-session-id". */
  readonly affinityHeader: string;
  readonly affinityPrefixChars: number;
  /** `cache-aware`: prompt characters considered. */
  readonly cachePromptChars: number;
  /** `[routing] sessions`: keep sessions on their node (false: no session key is read). */
  readonly sessions: boolean;
}

/** The affinity policy's key text for a session key (its historical `header:` and `user:` forms kept). */
function affinityText(key: SessionKey): string {
  if (key.source.startsWith('header ')) return `header:${key.value}`;
  return `${key.source}:${key.value}`;
}

export function affinityKeyOf(
  headers: IncomingHttpHeaders,
  endpoint: string,
  json: Readonly<Record<string, unknown>>,
  settings: Pick<AffinitySettings, 'affinityHeader' | 'affinityPrefixChars'>,
): string | undefined {
  const session = sessionKeyOf(headers, json, settings.affinityHeader);
  if (session !== undefined) return affinityText(session);
  const prefix = promptText(endpoint, json).pieces.join('\n').slice(0, settings.affinityPrefixChars);
  return prefix === '' ? undefined : `prefix:${prefix}`;
}

/** The prompt's text from its start, up to `maxChars` (what `cache-aware` matches); undefined = none. */
export function promptPrefixOf(endpoint: string, json: Readonly<Record<string, unknown>>, maxChars: number): string | undefined {
  const text = promptText(endpoint, json).pieces.join('\n').slice(0, maxChars);
  return text === '' ? undefined : text;
}

/**
 * Each feature's reader over one request; nothing is read until routing asks for a feature. One
 * object whose readers are its methods (no closure per feature: every request builds one).
 */
class RequestReaders implements FeatureReaders {
  readonly #headers: IncomingHttpHeaders;
  readonly #endpoint: string;
  readonly #json: Readonly<Record<string, unknown>>;
  readonly #settings: AffinitySettings;

  constructor(
    headers: IncomingHttpHeaders,
    endpoint: string,
    json: Readonly<Record<string, unknown>>,
    settings: AffinitySettings,
  ) {
    this.#headers = headers;
    this.#endpoint = endpoint;
    this.#json = json;
    this.#settings = settings;
  }

  affinityKey(): string | undefined {
    return affinityKeyOf(this.#headers, this.#endpoint, this.#json, this.#settings);
  }

  promptPrefix(): string | undefined {
    return promptPrefixOf(this.#endpoint, this.#json, this.#settings.cachePromptChars);
  }

  sessionKey(): string | undefined {
    return this.#settings.sessions
      ? sessionFeature(sessionKeyOf(this.#headers, this.#json, this.#settings.affinityHeader))
      : undefined;
  }

  previousResponseId(): string | undefined {
    return this.#settings.sessions ? previousResponseOf(this.#json) : undefined;
  }
}

export function featureReaders(
  headers: IncomingHttpHeaders,
  endpoint: string,
  json: Readonly<Record<string, unknown>>,
  settings: AffinitySettings,
): FeatureReaders {
  return new RequestReaders(headers, endpoint, json, settings);
}
