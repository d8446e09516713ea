// Writes one response, either whole (`reply`) or as an SSE stream, and carries the
// `midstream_reset` fault: once armed, it cuts the connection after N events (or halfway through a
// whole body). Writes after the response ended or the socket died are ignored. A stream may be
// teed (`tee`: llama-server's resumable-stream session, stream-sessions.ts): every streamed byte goes
// to the copy first, so a byte lost to a dead socket is still kept.

import type { ServerResponse } from 'node:http';
import { formatSseEvent, type Reply, type SseEvent } from '#src/sim/reply.ts';

/** Where a teed stream's bytes also go: told when the answer becomes a stream, then each write. */
export interface StreamCopy {
  opened(): void;
  write(bytes: Buffer): void;
}

export class ResponseWriter {
  readonly #res: ServerResponse;
  readonly #destroy: () => void;
  #cutAfterEvents: number | undefined;
  #eventsWritten = 0;
  #writesPending = 0;
  #cutting = false;
  #copy: StreamCopy | undefined;

  /** `destroy` tears the socket down on purpose (not counted as a client abort). */
  constructor(res: ServerResponse, destroy: () => void) {
    this.#res = res;
    this.#destroy = destroy;
  }

  /** Arms the midstream cut: streams end after `events` events, whole bodies halfway. */
  cutAfterEvents(events: number): void {
    this.#cutAfterEvents = events;
  }

  /** Every streamed byte from now on is also given to `copy`, whether or not the client is still there. */
  tee(copy: StreamCopy): void {
    this.#copy = copy;
  }

  get isOpen(): boolean {
    return !this.#cutting && !this.#res.writableEnded && !this.#res.destroyed;
  }

  get headersSent(): boolean {
    return this.#res.headersSent;
  }

  /** Sends a whole response with Content-Length. */
  reply(reply: Reply): void {
    if (!this.isOpen || this.headersSent) return;
    const body = Buffer.from(reply.body, 'utf8');
    this.#res.writeHead(reply.status, { ...reply.headers, 'Content-Length': String(body.length) });
    if (this.#cutAfterEvents !== undefined) {
      this.#res.write(body.subarray(0, Math.floor(body.length / 2)), () => this.#destroy());
      return;
    }
    this.#res.end(body);
  }

  /** Sends a whole response with chunked transfer encoding (no Content-Length), as proxies do. */
  replyChunked(reply: Reply): void {
    if (!this.isOpen || this.headersSent) return;
    if (this.#cutAfterEvents !== undefined) {
      this.reply(reply);
      return;
    }
    this.#res.writeHead(reply.status, reply.headers);
    this.#res.end(reply.body);
  }

  openStream(status: number, headers: Readonly<Record<string, string>>): void {
    this.#copy?.opened();
    if (!this.isOpen || this.headersSent) return;
    this.#res.writeHead(status, headers);
    this.#res.flushHeaders();
  }

  event(event: SseEvent): void {
    this.#write(formatSseEvent(event));
  }

  /** Bytes as they are (a replayed stream's). */
  bytes(chunk: Buffer): void {
    this.#write(chunk);
  }

  #write(text: string | Buffer): void {
    this.#copy?.write(typeof text === 'string' ? Buffer.from(text, 'utf8') : text);
    if (!this.isOpen) return;
    if (this.#cutAfterEvents !== undefined && this.#eventsWritten >= this.#cutAfterEvents) {
      this.#cut();
      return;
    }
    this.#eventsWritten++;
    this.#writesPending++;
    this.#res.write(text, () => {
      this.#writesPending--;
      if (this.#cutting && this.#writesPending === 0) this.#destroy();
    });
  }

  /** One line of an NDJSON stream (Ollama's native API): the value as JSON and a newline; the midstream cut counts lines as events. */
  line(value: unknown): void {
    this.#write(`${JSON.stringify(value)}\n`);
  }

  endStream(): void {
    if (!this.isOpen) return;
    if (this.#cutAfterEvents !== undefined) {
      this.#cut();
      return;
    }
    this.#res.end();
  }

  /** Destroys the socket once the events already written have reached it. */
  #cut(): void {
    this.#cutting = true;
    if (this.#writesPending === 0) this.#destroy();
  }
}
