// llama-server's resumable streams, as one server process keeps them (tools/server/server-stream.cpp
// at ngxson/llama.cpp 3f545bec): a POST that generates with an `X-Conversation-Id` header keeps its
// answer's SSE bytes in a session that outlives the client's connection — a ring of at most 4 MiB
// (the oldest bytes dropped first, counted as the dropped prefix), finalised when the generation
// ends, and dropped by a GC that runs every 60 s and takes sessions completed at least 300 s before.
// One conversation id has at most one session: a new POST with the same id replaces (and cancels)
// the old one. A request that never streamed leaves no session. The routes (`GET /v1/stream`,
// `POST /v1/streams/lookup`, `DELETE /v1/stream`) answer from here (stream-routes.ts).

import type { Clock } from '#src/core/clock.ts';

/** STREAM_SESSION_MAX_BYTES: the ring's cap. */
export const STREAM_RING_BYTES = 4 * 1024 * 1024;
/** STREAM_SESSION_TTL_SECONDS: how long a completed session is kept (at least). */
export const STREAM_TTL_SECONDS = 300;
/** STREAM_SESSION_GC_INTERVAL_SECONDS: the GC's tick (sessions go at the first tick past their TTL). */
export const STREAM_GC_INTERVAL_SECONDS = 60;

/** What a reader is told: more bytes, or the end (the session finalised). */
export interface StreamReader {
  bytes(chunk: Buffer): void;
  done(): void;
}

export class StreamSession {
  readonly conversationId: string;
  readonly startedSec: number;
  readonly #cap: number;
  #chunks: Buffer[] = [];
  #size = 0;
  #dropped = 0;
  #done = false;
  #completedSec = 0;
  #streamed = false;
  readonly #cancel = new AbortController();
  readonly #readers = new Set<{ position: number; reader: StreamReader }>();

  constructor(conversationId: string, startedSec: number, cap = STREAM_RING_BYTES) {
    this.conversationId = conversationId;
    this.startedSec = startedSec;
    this.#cap = cap;
  }

  /** Aborts when the session is cancelled (a DELETE, or a newer session for the same id): the generation stops. */
  get cancelled(): AbortSignal {
    return this.#cancel.signal;
  }

  get isDone(): boolean {
    return this.#done;
  }

  /** Bytes that ever entered the session. */
  get totalBytes(): number {
    return this.#dropped + this.#size;
  }

  get droppedPrefix(): number {
    return this.#dropped;
  }

  /** 0 while alive, unix seconds once finalised. */
  get completedSec(): number {
    return this.#completedSec;
  }

  /** Whether the answer became a stream (set_next ran): one that did not leaves no session. */
  get streamed(): boolean {
    return this.#streamed;
  }

  opened(): void {
    this.#streamed = true;
  }

  /** Appends bytes (false once finalised); past the cap the oldest go, a chunk larger than the cap keeps its tail. */
  append(data: Buffer): boolean {
    if (data.length === 0) return true;
    if (this.#done) return false;
    if (data.length >= this.#cap) {
      this.#dropped += this.#size + (data.length - this.#cap);
      this.#chunks = [data.subarray(data.length - this.#cap)];
      this.#size = this.#cap;
    } else {
      this.#chunks.push(data);
      this.#size += data.length;
      let over = this.#size - this.#cap;
      while (over > 0) {
        const first = this.#chunks[0];
        if (first === undefined) break;
        const cut = Math.min(first.length, over);
        if (cut === first.length) this.#chunks.shift();
        else this.#chunks[0] = first.subarray(cut);
        this.#size -= cut;
        this.#dropped += cut;
        over -= cut;
      }
    }
    for (const entry of this.#readers) this.#feed(entry);
    return true;
  }

  finalize(nowSec: number): void {
    if (this.#done) return;
    this.#done = true;
    this.#completedSec = nowSec;
    for (const entry of [...this.#readers]) {
      this.#readers.delete(entry);
      entry.reader.done();
    }
  }

  cancel(): void {
    this.#cancel.abort();
  }

  /**
   * Reads from byte `from` on: what is buffered now, then live bytes, then the end. Undefined: the
   * offset fell below the dropped prefix (the route's 400). Returns how to stop reading.
   */
  read(from: number, reader: StreamReader): (() => void) | undefined {
    if (from < this.#dropped) return undefined;
    const entry = { position: from, reader };
    this.#feed(entry);
    if (this.#done) {
      reader.done();
      return () => {};
    }
    this.#readers.add(entry);
    return () => void this.#readers.delete(entry);
  }

  #feed(entry: { position: number; reader: StreamReader }): void {
    const end = this.totalBytes;
    if (entry.position >= end) return;
    if (entry.position < this.#dropped) {
      // A live reader overtaken by the ring: read_from answers OFFSET_LOST, which ends the stream.
      this.#readers.delete(entry);
      entry.reader.done();
      return;
    }
    const all = Buffer.concat(this.#chunks, this.#size);
    entry.reader.bytes(all.subarray(entry.position - this.#dropped));
    entry.position = end;
  }
}

/** The process's sessions by conversation id (`g_stream_sessions`), with the GC on the 60 s grid from `startedMs`. */
export class StreamSessions {
  readonly #clock: Clock;
  readonly #startedMs: number;
  readonly #sessions = new Map<string, StreamSession>();

  constructor(clock: Clock) {
    this.#clock = clock;
    this.#startedMs = clock.now();
  }

  #nowSec(): number {
    return Math.floor(this.#clock.now() / 1000);
  }

  /** The GC's ticks so far, applied: a session completed at least the TTL before the last tick is gone. */
  #collect(): void {
    const intervalMs = STREAM_GC_INTERVAL_SECONDS * 1000;
    const ticks = Math.floor((this.#clock.now() - this.#startedMs) / intervalMs);
    if (ticks === 0) return;
    const cutoff = Math.floor((this.#startedMs + ticks * intervalMs) / 1000) - STREAM_TTL_SECONDS;
    for (const [id, session] of this.#sessions) {
      if (session.completedSec !== 0 && session.completedSec <= cutoff) {
        this.#sessions.delete(id);
        session.finalize(this.#nowSec());
      }
    }
  }

  /** `create_or_replace`: a fresh session; a previous one for the id is cancelled and finalised. */
  createOrReplace(conversationId: string): StreamSession {
    this.#collect();
    const fresh = new StreamSession(conversationId, this.#nowSec());
    const previous = this.#sessions.get(conversationId);
    this.#sessions.set(conversationId, fresh);
    if (previous !== undefined) {
      previous.cancel();
      previous.finalize(this.#nowSec());
    }
    return fresh;
  }

  get(conversationId: string): StreamSession | undefined {
    this.#collect();
    return this.#sessions.get(conversationId);
  }

  /** The producer ended: the session is finalised (kept for the TTL). */
  finish(session: StreamSession): void {
    session.finalize(this.#nowSec());
  }

  /** `evict`: a request that never streamed leaves nothing behind (only its own session, not a newer one). */
  evict(session: StreamSession): void {
    if (this.#sessions.get(session.conversationId) === session) this.#sessions.delete(session.conversationId);
    session.finalize(this.#nowSec());
  }

  /** `evict_and_cancel` (DELETE): cancels the generation and drops the bytes; unknown ids are no error. */
  evictAndCancel(conversationId: string): void {
    const session = this.#sessions.get(conversationId);
    if (session === undefined) return;
    this.#sessions.delete(conversationId);
    session.cancel();
    session.finalize(this.#nowSec());
  }

  /** The process ended (`server_stream_session_manager_stop`): every session is finalised, none kept. */
  dropAll(): void {
    const all = [...this.#sessions.values()];
    this.#sessions.clear();
    for (const session of all) {
      session.cancel();
      session.finalize(this.#nowSec());
    }
  }

  /** The sessions matching the ids asked, in the order asked: the exact id, or `<id>::<model>`. */
  lookup(ids: readonly string[]): StreamSession[] {
    this.#collect();
    const all = [...this.#sessions.values()];
    return ids.flatMap((id) =>
      all.filter((session) => session.conversationId === id || session.conversationId.startsWith(`${id}::`)),
    );
  }
}
