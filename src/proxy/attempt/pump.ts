// Copies a streamed upstream body to the client chunk by chunk, with backpressure both ways: the
// body's chunks are written to the response as the node's socket yields them (those of one socket
// read as one write, at the end of the tick), and a full response buffer pauses the node's socket
// until the client drains it. A gated copy (first-token-gate.ts) holds everything, the client's
// head included, until the answer's first token.

import { Buffer } from 'node:buffer';
import type { ServerResponse } from 'node:http';
import type { Clock } from '#src/core/clock.ts';
import { describeError } from './attempt-result.ts';
import type { BodyFeed, BodySink } from './attempt-exchange.ts';
import type { AnswerReader } from './answer-reader.ts';
import type { FirstTokenGate } from './first-token-gate.ts';
import { StreamTiming } from './stream-timing.ts';
import { trailingLineEndsOf } from './stream-break.ts';

export interface PumpResult {
  readonly ok: boolean;
  readonly error: string;
  readonly clientGone: boolean;
  /** Something was written to the client (always, without a gate); false = nothing reached it, the node may be failed over. */
  readonly opened: boolean;
  /** The body's own failure, when it failed (the caller may classify it). */
  readonly cause?: Error | undefined;
  /** The LFs (0-2) that ended what the client was written last: whether it ended on an event's (or line's) end. */
  readonly trailingLineEnds: number;
  /** When the client was first written to (monotonic ms). */
  readonly firstByteAt: number | undefined;
  /** When generated tokens passed (a stream's). */
  readonly timing: StreamTiming;
}

/**
 * Copies body to res through `reader` (which reads the usage, and may take out what the gateway
 * added); ends res when body ends, never on failure (the caller decides how, after `reader.flush()`).
 */
export function pump(body: BodyFeed, res: ServerResponse, clock: Clock, reader: AnswerReader): Promise<PumpResult> {
  // No gate here: nothing opens one, so nothing throws through onThrew.
  return new Promise((onPumped, onThrew) => pumpTo(body, res, clock, reader, { onPumped, onThrew }));
}

/** What is told, once, how the copy ended. */
export interface PumpListener {
  onPumped(result: PumpResult): void;
  /** Opening the gate threw (the client's head could not be written): nothing reached the client, the node's answer is dropped. */
  onThrew(error: unknown): void;
}

/**
 * The same copy, its end told to `listener` straight from the body's producer or the response's
 * close (no promise). `gate`: nothing is written until it opens (the caller wrote no head).
 */
export function pumpTo(
  body: BodyFeed,
  res: ServerResponse,
  clock: Clock,
  reader: AnswerReader,
  listener: PumpListener,
  gate?: FirstTokenGate,
): void {
  body.attach(new Pump(body, res, clock, reader, listener, gate));
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
  /** Closed until the first token: what passes is held (undefined = open). */
  #gate: FirstTokenGate | undefined;
  /** The LFs that ended what was gathered for the client last (0-2). */
  #lineEnds = 0;

  constructor(
    body: BodyFeed,
    res: ServerResponse,
    clock: Clock,
    reader: AnswerReader,
    listener: PumpListener,
    gate: FirstTokenGate | undefined,
  ) {
    this.#listener = listener;
    this.#gate = gate;
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
    let out = this.#reader.pass(chunk);
    this.#timing.passed(this.#reader.seenTokens(), this.#now);
    const gate = this.#gate;
    if (gate !== undefined) {
      if (!gate.hold(out, this.#reader.seenTokens())) return;
      const opened = this.#opened(gate);
      if (opened === undefined) return;
      out = opened;
    }
    if (this.#firstByteAt === undefined) this.#firstByteAt = this.#clock.monotonicMs();
    if (out.length === 0) return;
    this.#gather(out);
  }

  /** One socket read brings many events: written one by one, each is its own HTTP chunk (four `_send`s); gathered, they are one chunk and one write. */
  #gather(out: Buffer): void {
    if (out.length === 0) return;
    this.#lineEnds = trailingLineEndsOf(out, this.#lineEnds);
    if (this.#pending !== undefined) this.#pending.push(out);
    else {
      this.#pending = [out];
      process.nextTick(this.#onTickEnd);
    }
  }

  onEnd(): void {
    // A stream that ended before any token (an empty answer) is whole: the gate opens on it.
    const gate = this.#gate;
    if (gate !== undefined) {
      const opened = this.#opened(gate);
      if (opened === undefined) return;
      this.#gather(opened);
    }
    if (this.#firstByteAt === undefined) this.#firstByteAt = this.#clock.monotonicMs();
    this.#writePending();
    const rest = this.#reader.flush();
    if (rest.length > 0) this.#res.end(rest);
    else this.#res.end();
    this.#finish(true, '', false);
  }

  /** The gate opened: what it held; undefined = opening it threw, and the pump has ended (onThrew). */
  #opened(gate: FirstTokenGate): Buffer | undefined {
    let held: Buffer;
    try {
      held = gate.open();
    } catch (error) {
      this.#threw(error);
      return undefined;
    }
    this.#gate = undefined;
    return held;
  }

  /** Writing the client's head threw: the node's answer is dropped (its request aborted), the throw told on. */
  #threw(error: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#res.off('close', this.#onResClose);
    this.#res.off('drain', this.#onDrain);
    this.#body.detach();
    this.#body.destroy(error instanceof Error ? error : new Error(String(error)));
    this.#listener.onThrew(error);
  }

  onError(error: Error): void {
    this.#finish(false, describeError(error), false, error);
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

  #finish(ok: boolean, error: string, clientGone: boolean, cause?: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    // The caller ends or destroys the response next: what was gathered goes before.
    this.#writePending();
    this.#res.off('close', this.#onResClose);
    this.#res.off('drain', this.#onDrain);
    const opened = this.#gate === undefined;
    this.#listener.onPumped({
      ok,
      error,
      clientGone,
      opened,
      cause,
      trailingLineEnds: this.#lineEnds,
      firstByteAt: this.#firstByteAt,
      timing: this.#timing,
    });
  }
}
