// Copies a streamed upstream body to the client chunk by chunk, with backpressure both ways: the
// body's chunks are written to the response as the node's socket yields them (those of one socket
// read as one write, at the end of the tick), and a full response buffer pauses the node's socket
// until the client drains it.

import { Buffer } from 'node:buffer';
import type { ServerResponse } from 'node:http';
import type { Clock } from '#src/core/clock.ts';
import { describeError } from './attempt-result.ts';
import type { BodyFeed, BodySink } from './body-feed.ts';
import type { AnswerReader } from './answer-reader.ts';
import { StreamTiming } from './stream-timing.ts';

export interface PumpResult {
  readonly ok: boolean;
  readonly error: string;
  readonly clientGone: boolean;
  readonly firstByteAt: number | undefined;
  /** When generated tokens passed (a stream's). */
  readonly timing: StreamTiming;
}

/**
 * Copies body to res through `reader` (which reads the usage, and may take out what the gateway
 * added); ends res when body ends, never on failure (the caller decides how, after `reader.flush()`).
 */
export function pump(body: BodyFeed, res: ServerResponse, clock: Clock, reader: AnswerReader): Promise<PumpResult> {
  return new Promise((onPumped) => pumpTo(body, res, clock, reader, { onPumped }));
}

/** What is told, once, how the copy ended. */
export interface PumpListener {
  onPumped(result: PumpResult): void;
}

/** The same copy, its end told to `listener` straight from the body's producer or the response's close (no promise). */
export function pumpTo(body: BodyFeed, res: ServerResponse, clock: Clock, reader: AnswerReader, listener: PumpListener): void {
  body.attach(new Pump(body, res, clock, reader, listener));
}

class Pump implements BodySink {
  readonly #body: BodyFeed;
  readonly #res: ServerResponse;
  readonly #clock: Clock;
  readonly #reader: AnswerReader;
  readonly #listener: PumpListener;
  readonly #onDrain: () => void;
  readonly #onResClose: () => void;
  readonly #onTickEnd: () => void;
  /** This tick's chunks, written as one at its end (not `res.cork()`: its write ignores the socket's backlog). */
  #pending: Buffer[] | undefined;
  #firstByteAt: number | undefined;
  readonly #timing = new StreamTiming();
  readonly #now: () => number;
  #settled = false;

  constructor(body: BodyFeed, res: ServerResponse, clock: Clock, reader: AnswerReader, listener: PumpListener) {
    this.#listener = listener;
    this.#body = body;
    this.#res = res;
    this.#clock = clock;
    this.#reader = reader;
    this.#now = () => clock.monotonicMs();
    this.#onDrain = () => body.resume();
    this.#onResClose = () => this.#clientClosed();
    this.#onTickEnd = () => {
      if (!this.#writePending()) body.pause();
    };
    res.on('close', this.#onResClose);
    res.on('drain', this.#onDrain);
  }

  onData(chunk: Buffer): void {
    if (this.#firstByteAt === undefined) this.#firstByteAt = this.#clock.monotonicMs();
    const out = this.#reader.pass(chunk);
    this.#timing.passed(this.#reader.seenTokens(), this.#now);
    if (out.length === 0) return;
    // One socket read brings many events: written one by one, each is its own HTTP chunk (four
    // `_send`s); gathered, they are one chunk and one write.
    if (this.#pending !== undefined) this.#pending.push(out);
    else {
      this.#pending = [out];
      process.nextTick(this.#onTickEnd);
    }
  }

  onEnd(): void {
    if (this.#firstByteAt === undefined) this.#firstByteAt = this.#clock.monotonicMs();
    this.#writePending();
    const rest = this.#reader.flush();
    if (rest.length > 0) this.#res.end(rest);
    else this.#res.end();
    this.#finish(true, '', false);
  }

  onError(error: Error): void {
    this.#finish(false, describeError(error), false);
  }

  #clientClosed(): void {
    if (this.#res.writableFinished) return;
    this.#body.detach();
    this.#body.destroy(new Error('client closed the connection'));
    this.#finish(false, 'client closed the connection', true);
  }

  /** Writes what this tick gathered; false when the response's buffer is full. */
  #writePending(): boolean {
    const pending = this.#pending;
    if (pending === undefined) return true;
    this.#pending = undefined;
    return this.#res.write(pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending));
  }

  #finish(ok: boolean, error: string, clientGone: boolean): void {
    if (this.#settled) return;
    this.#settled = true;
    // The caller ends or destroys the response next: what was gathered goes before.
    this.#writePending();
    this.#res.off('close', this.#onResClose);
    this.#res.off('drain', this.#onDrain);
    this.#listener.onPumped({ ok, error, clientGone, firstByteAt: this.#firstByteAt, timing: this.#timing });
  }
}
