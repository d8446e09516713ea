// llama-server's resumable-stream routes (tools/server/server-stream.cpp, and the router's
// proxies in server-models.cpp, at ngxson/llama.cpp 3f545bec), for the single server and each
// router child, over stream-sessions.ts:
//   GET /v1/stream?conv_id=&from=N — the buffered bytes from N, then live ones until the end;
//   POST /v1/streams/lookup {"conversation_ids": [...]} — one entry per session asked about;
//   DELETE /v1/stream?conv_id= — cancels and drops the session; 204 whether or not it existed.
// The router keeps a `conv_id → model` map, written for every proxied POST with the header (before
// the model's load wait: a DELETE while it loads cancels the parked request), never expired; it
// sends each route to the child of the mapped model when that model is `loaded`.

import type { IncomingHttpHeaders } from 'node:http';
import type { Clock } from '#src/core/clock.ts';
import { isRecord } from '#src/core/is-record.ts';
import { untilAborted, type SimExchange } from '#src/sim/exchange.ts';
import type { Reply } from '#src/sim/reply.ts';
import { StreamSessions, type StreamSession } from '#src/sim/stream-sessions.ts';
import { llamaError, llamaJson, llamaNotFound, LLAMA_SSE_HEADERS } from '#src/sim/kinds/llamacpp-shapes.ts';

export const STREAM_PATH = '/v1/stream';
/** The endpoints `handle_completions_impl` serves: the only ones whose answer a session keeps. */
export const GENERATING: ReadonlySet<string> = new Set(['chat', 'completion', 'responses', 'messages']);
export const STREAMS_LOOKUP_PATH = '/v1/streams/lookup';

/** `server_stream_conv_id_from_headers`: the X-Conversation-Id header (any case); '' when absent. */
export function conversationIdOf(headers: IncomingHttpHeaders): string {
  const value = headers['x-conversation-id'];
  return typeof value === 'string' ? value : '';
}

/** Whether the request is one of the three stream routes. */
export function isStreamRoute(method: string, path: string): boolean {
  return (
    (path === STREAM_PATH && (method === 'GET' || method === 'DELETE')) || (method === 'POST' && path === STREAMS_LOOKUP_PATH)
  );
}

const missingId = (): Reply => llamaError(400, 'invalid_request_error', 'Missing conversation id in path');
// The handler says "Stream not found or expired", but the HTTP layer's error handler rewrites every
// 404 body to its own "File Not Found" (server-http.cpp:145; seen on a real router).
const notFound = (): Reply => llamaNotFound();
/** The child's DELETE answer: 204, `application/json`, no body. */
const deleted = (): Reply => ({ status: 204, headers: { ...LLAMA_SSE_HEADERS, 'Content-Type': 'application/json' }, body: '' });

/** `std::stoull` on the `from` parameter: leading digits (a leading `-` wraps to a huge offset); undefined = not a number. */
export function parseFrom(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return 0;
  const match = /^\s*([+-]?)(\d+)/.exec(text);
  if (match === null) return undefined;
  const value = Number(match[2]);
  return match[1] === '-' && value !== 0 ? Number.MAX_SAFE_INTEGER : value;
}

/**
 * A completion POST with the header: its answer is teed into a fresh session, and it runs detached
 * from the client (only a DELETE or a newer session for the id stops it). A request that never
 * streamed (a JSON answer, an error before the first chunk) leaves no session.
 */
export async function inSession(
  exchange: SimExchange,
  sessions: StreamSessions,
  conversationId: string,
  run: (exchange: SimExchange) => Promise<void>,
): Promise<void> {
  const session = sessions.createOrReplace(conversationId);
  exchange.writer.tee({ opened: () => session.opened(), write: (bytes) => void session.append(bytes) });
  try {
    await run({ ...exchange, signal: session.cancelled });
  } finally {
    if (session.streamed) sessions.finish(session);
    else sessions.evict(session);
  }
}

/** A child's (or the single server's) answer to one of the three routes. */
export async function childStreamRoute(exchange: SimExchange, sessions: StreamSessions): Promise<void> {
  const { method, path, writer } = exchange;
  if (method === 'POST' && path === STREAMS_LOOKUP_PATH) {
    const { body } = exchange;
    if (body.kind !== 'json') {
      const reason = body.kind === 'empty' ? 'unexpected end of input' : body.error.message;
      writer.reply(llamaJson(400, { error: { message: `invalid body: ${reason}`, type: 'invalid_request_error' } }));
      return;
    }
    writer.reply(llamaJson(200, lookupEntries(sessions, requestedIds(body.value))));
    return;
  }
  const conversationId = exchange.query['conv_id'] ?? '';
  if (conversationId === '') return writer.reply(missingId());
  if (method === 'DELETE') {
    sessions.evictAndCancel(conversationId);
    return writer.reply(deleted());
  }
  const session = sessions.get(conversationId);
  if (session === undefined) return writer.reply(notFound());
  const from = parseFrom(exchange.query['from']);
  if (from === undefined) return writer.reply(llamaError(400, 'invalid_request_error', "Invalid 'from' offset"));
  if (from < session.droppedPrefix)
    return writer.reply(llamaError(400, 'invalid_request_error', 'Stream offset lost, please restart'));
  await replay(exchange, session, from);
}

async function replay(exchange: SimExchange, session: StreamSession, from: number): Promise<void> {
  const { writer, signal } = exchange;
  writer.openStream(200, LLAMA_SSE_HEADERS);
  let ended: () => void = () => {};
  const over = new Promise<void>((resolve) => {
    ended = resolve;
  });
  const stop = session.read(from, {
    bytes: (chunk) => writer.bytes(chunk),
    done: () => {
      writer.endStream();
      ended();
    },
  });
  await Promise.race([over, untilAborted(signal)]);
  stop?.();
}

/** The ids a lookup body names (non-empty strings of its `conversation_ids` array; anything else: none). */
export function requestedIds(value: unknown): string[] {
  if (!isRecord(value) || !Array.isArray(value['conversation_ids'])) return [];
  return value['conversation_ids'].filter((id): id is string => typeof id === 'string' && id !== '');
}

function lookupEntries(sessions: StreamSessions, ids: readonly string[]): unknown[] {
  return sessions.lookup(ids).map((session) => ({
    conversation_id: session.conversationId,
    is_done: session.isDone,
    total_bytes: session.totalBytes,
    started_at: session.startedSec,
    completed_at: session.completedSec,
  }));
}

interface Tracked {
  readonly model: string;
  readonly ticket: number;
  /** Aborts when a stop (DELETE) or a newer request for the id replaced this registration. */
  readonly stop: AbortController;
}

/** The router's `conv_models` (conv_model_tracker): conv id → the model name its POST asked for, with a ticket. */
export class ConversationModels {
  readonly #map = new Map<string, Tracked>();
  #next = 1;

  /** Registers `model` for `conversationId`; the signal aborts once the registration is gone. Undefined: nothing registered. */
  remember(conversationId: string, model: string): { readonly ticket: number; readonly stopped: AbortSignal } | undefined {
    if (conversationId === '' || model === '') return undefined;
    const ticket = this.#next++;
    const stop = new AbortController();
    this.#map.get(conversationId)?.stop.abort();
    this.#map.set(conversationId, { model, ticket, stop });
    return { ticket, stopped: stop.signal };
  }

  alive(conversationId: string, ticket: number): boolean {
    return this.#map.get(conversationId)?.ticket === ticket;
  }

  lookup(conversationId: string): string | undefined {
    return this.#map.get(conversationId)?.model;
  }

  forget(conversationId: string): void {
    this.#map.get(conversationId)?.stop.abort();
    this.#map.delete(conversationId);
  }
}

/** What the router's stream proxies need of it: the map, and a model's status and child sessions. */
export interface RouterStreams {
  readonly conversations: ConversationModels;
  /** The child's sessions for a tracked model name when it is `loaded` (is_ready), else its status (or undefined: unknown). */
  child(model: string): { readonly sessions: StreamSessions } | { readonly status: string | undefined };
}

/** The router's three proxies (router_stream_get / router_streams_lookup / router_stream_delete). */
export async function routerStreamRoute(exchange: SimExchange, router: RouterStreams): Promise<void> {
  const { method, path, writer } = exchange;
  if (method === 'POST' && path === STREAMS_LOOKUP_PATH) {
    // A body that does not parse is an empty answer here (the child would say 400).
    const ids = exchange.body.kind === 'json' ? requestedIds(exchange.body.value) : [];
    const perChild = new Map<StreamSessions, string[]>();
    for (const id of ids) {
      const owner = ownerOf(router, id);
      if (owner === undefined || !('sessions' in owner)) continue;
      perChild.set(owner.sessions, [...(perChild.get(owner.sessions) ?? []), id]);
    }
    const entries = [...perChild].flatMap(([sessions, asked]) => lookupEntries(sessions, asked));
    writer.reply(llamaJson(200, entries));
    return;
  }
  const conversationId = exchange.query['conv_id'] ?? '';
  if (conversationId === '') return writer.reply(missingId());
  const owner = ownerOf(router, conversationId);
  if (method === 'DELETE') {
    if (owner !== undefined && 'sessions' in owner) owner.sessions.evictAndCancel(conversationId);
    router.conversations.forget(conversationId);
    return writer.reply(deleted());
  }
  if (owner !== undefined && 'sessions' in owner) return childStreamRoute(exchange, owner.sessions);
  const loading =
    owner !== undefined && (owner.status === 'loading' || owner.status === 'downloading' || owner.status === 'downloaded');
  writer.reply(loading ? llamaError(503, 'unavailable_error', 'Stream owner model is loading, retry later') : notFound());
}

function ownerOf(router: RouterStreams, conversationId: string): ReturnType<RouterStreams['child']> | undefined {
  const model = router.conversations.lookup(conversationId);
  return model === undefined ? undefined : router.child(model);
}

/** The sessions of each child by model id, made on first use (each child is its own process with its own). */
export class ChildSessions {
  readonly #clock: Clock;
  readonly #byModel = new Map<string, StreamSessions>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** The child exited (its model unloaded): its sessions went with the process. */
  drop(model: string): void {
    const sessions = this.#byModel.get(model);
    this.#byModel.delete(model);
    sessions?.dropAll();
  }

  dropAll(): void {
    for (const model of [...this.#byModel.keys()]) this.drop(model);
  }

  of(model: string): StreamSessions {
    let sessions = this.#byModel.get(model);
    if (sessions === undefined) {
      sessions = new StreamSessions(this.#clock);
      this.#byModel.set(model, sessions);
    }
    return sessions;
  }
}
