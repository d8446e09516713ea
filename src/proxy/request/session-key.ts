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
// policy adds it after these (affinity-key.ts). `previous_response_id` is read apart: it names an
// answer, whose node routing may remember (routing/policies/session-table.ts).

import type { IncomingHttpHeaders } from 'node:http';

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
  for (const name of AGENT_HEADERS) {
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
