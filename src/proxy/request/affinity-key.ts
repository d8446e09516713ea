// Pure: what a selection policy may read of one request (routing/ says which its policy reads:
// `requestFeaturesFor`), each read only when routing asks: its session key, from what agents and
// SDKs already send; the affinity key; the prompt prefix; the answer it continues
// (`previous_response_id`). One concept, in its two parts (session-key.ts merged here).

import type { IncomingHttpHeaders } from 'node:http';
import { sessionFeature, type FeatureReaders } from '#src/routing/index.ts';
import { promptText } from './prompt-size.ts';

// ---- The session key -------------------------------------------------------------------------
//
// Pure: the session a request belongs to, from what coding agents and SDKs already send — no
// configuration. The first present, non-empty one wins, in this order (docs/routing.md, "Sessions"):
//   x-claude-code-session-id   Claude Code (every request of one session)
//   session-id / session_id    Codex (the conversation id; `session_id` in older versions)
//   prompt_cache_key           Codex (body: the same conversation id), any Responses/Chat client
//   x-session-affinity         OpenCode (its session id)
//   [routing] affinity_header  the operator's own header (default x-session-id, which OpenCode also sends)
//   metadata.user_id           Anthropic Messages clients
//   user / safety_identifier   OpenAI clients
// The prompt prefix is not a session key here (it would key every plain request): the `affinity`
// policy adds it after these (below). `previous_response_id` is read apart: it names an
// answer, whose node routing may remember (routing/policies/session-table.ts).

/** Where a session key was read from: a header's name or a body field's path (never its value). */
export type SessionSource =
  | 'x-claude-code-session-id'
  | 'session-id'
  | 'session_id'
  | 'prompt_cache_key'
  | 'x-session-affinity'
  | 'metadata.user_id'
  | 'user'
  | 'safety_identifier'
  | `header ${string}`;

export interface SessionKey {
  readonly source: SessionSource;
  readonly value: string;
}

/** The agents' headers, in order, before the configured one. */
const AGENT_HEADERS = ['x-claude-code-session-id', 'session-id', 'session_id'] as const;

/** Longest value kept: a session id is short; a longer one is cut (it still keys the same session). */
export const MAX_SESSION_VALUE_CHARS = 512;

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const raw = headers[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return value === undefined || value === '' ? undefined : value.slice(0, MAX_SESSION_VALUE_CHARS);
}

function field(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value.slice(0, MAX_SESSION_VALUE_CHARS) : undefined;
}

/** The request's session key, or undefined for a request that names none (a plain request). */
export function sessionKeyOf(
  headers: IncomingHttpHeaders,
  json: Readonly<Record<string, unknown>>,
  affinityHeader: string,
): SessionKey | undefined {
  // Indexed: no iterator and result objects per request while the code is cold.
  for (let i = 0; i < AGENT_HEADERS.length; i += 1) {
    const name = AGENT_HEADERS[i] as (typeof AGENT_HEADERS)[number];
    const value = headerValue(headers, name);
    if (value !== undefined) return { source: name, value };
  }
  const cacheKey = field(json.prompt_cache_key);
  if (cacheKey !== undefined) return { source: 'prompt_cache_key', value: cacheKey };
  const opencode = headerValue(headers, 'x-session-affinity');
  if (opencode !== undefined) return { source: 'x-session-affinity', value: opencode };
  const configured = headerValue(headers, affinityHeader);
  if (configured !== undefined) return { source: `header ${affinityHeader}`, value: configured };
  const metadata = json.metadata;
  if (typeof metadata === 'object' && metadata !== null) {
    const userId = field((metadata as Record<string, unknown>).user_id);
    if (userId !== undefined) return { source: 'metadata.user_id', value: userId };
  }
  const user = field(json.user);
  if (user !== undefined) return { source: 'user', value: user };
  const safety = field(json.safety_identifier);
  if (safety !== undefined) return { source: 'safety_identifier', value: safety };
  return undefined;
}

/** The body's `previous_response_id` (OpenAI Responses), if any. */
export function previousResponseOf(json: Readonly<Record<string, unknown>>): string | undefined {
  return field(json.previous_response_id);
}

// ---- The affinity key and the prompt prefix --------------------------------------------------
//
// The session key is the one above, unless `[routing] sessions = false`. The affinity key is the session key, else
// the first N characters of the prompt (prefix affinity: requests that open alike go alike),
// prefixed by source so a header value never collides with a user name. The prompt prefix is the
// prompt's text from its start (what a prefix cache holds).

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
