// The streaming strategy: the node's answer goes to the client chunk by chunk as it arrives. A
// stream with a first-token deadline is held, head included, until its first token
// (first-token-gate.ts): a break or the deadline before it is a failure to fail over from. Once the
// client had bytes there is no failing over: a break ends the response — an SSE or NDJSON stream
// with a terminal error event in the client's dialect (stream-break.ts; never an invented [DONE]),
// anything else by closing the socket, so the client cannot take it as whole.
// Driven by the pump's callbacks: the outcome is told to the attempt, no promise between.

import type { AnswerUsage } from './answer-usage.ts';
import type { AttemptOutcome, OutcomeListener } from './attempt-outcome.ts';
import { pumpTo, type PumpListener, type PumpResult } from './pump.ts';
import type { AnswerReader } from './answer-reader.ts';
import type { AnswerRewrite } from './answer-rewrite.ts';
import { classify } from './attempt-result.ts';
import { FirstTokenGate, type GateOpener } from './first-token-gate.ts';
import { streamBreakBytes } from './stream-break.ts';
import type { ErrorDialect } from '../http/error-dialect.ts';
import { UsageStrip, type UsageAsked } from './usage-strip.ts';
import { UsageWatch } from './usage-watch.ts';
import { FirstIdWatch } from './first-answer-id.ts';
import { clientHead, type ClientSide, type UpstreamAnswer } from './attempt-exchange.ts';

export interface StreamOptions {
  /** True for text/event-stream answers. */
  readonly eventStream: boolean;
  /** True for newline-delimited JSON (Ollama's native streams): its generated text is counted as it passes. */
  readonly ndjson?: boolean | undefined;
  /** Bytes already read while trying to hold the answer; the rest is still in the (paused) body. */
  readonly head?: Buffer;
  /** The gateway asked this stream for its usage (request/usage-ask.ts): what asking added is taken out. */
  readonly usageAsked?: UsageAsked | undefined;
  /** The client gets the stream in another API (answer-rewrite.ts): its events are translated as they pass. */
  readonly rewrite?: AnswerRewrite | undefined;
  /** The client's error dialect: a stream that breaks after the client had bytes ends with its terminal error event. */
  readonly errorDialect?: ErrorDialect | undefined;
  /** Told the answer's id from the stream's first event, as it passes (first-answer-id.ts); undefined = not read. */
  readonly learnAnswerId?: ((id: string) => void) | undefined;
}

/** A stream the gateway asked for usage is framed and stripped; any other answer passes as it came. */
function readerFor(options: StreamOptions): AnswerReader {
  if (options.eventStream) {
    const usage = options.usageAsked !== undefined ? new UsageStrip(options.usageAsked) : new UsageWatch('sse');
    // The node's own id, read from the node's bytes (before any translation).
    const reader = options.learnAnswerId === undefined ? usage : new FirstIdWatch(usage, options.learnAnswerId);
    return options.rewrite === undefined ? reader : options.rewrite.stream(reader);
  }
  return new UsageWatch(options.ndjson === true ? 'ndjson' : 'body');
}

/** The streaming strategy as a promise (for a strategy that falls back to it: an error body too big to inspect). */
export function streamThrough(answer: UpstreamAnswer, client: ClientSide, options: StreamOptions): Promise<AttemptOutcome> {
  return new Promise((ended, threw) => streamOn(answer, client, options, { ended, threw }));
}

/** Streams the answer through; its end is told to `end` from the body's producer or the response's close (no promise). */
export function streamOn(answer: UpstreamAnswer, client: ClientSide, options: StreamOptions, end: OutcomeListener): void {
  const { res, exchange } = client;
  const { head } = options;
  const reader = readerFor(options);
  const streamEnd = new StreamEnd(answer, client, options, reader, end);
  // A 2xx event or NDJSON stream waits for its first token while a deadline runs; anything else is the node's answer now.
  const gated =
    head === undefined &&
    answer.status >= 200 &&
    answer.status < 300 &&
    (options.eventStream || options.ndjson === true) &&
    exchange.awaitingFirstToken();
  if (!gated) {
    exchange.firstTokenCame();
    streamEnd.gateOpened();
  }
  if (head !== undefined) {
    exchange.heldBytesWritten();
    res.write(reader.pass(head));
  }
  pumpTo(answer.body, res, client.clock, reader, streamEnd, gated ? new FirstTokenGate(streamEnd) : undefined);
  // holdBody paused a body it stopped reading; a new 'data' listener does not restart it.
  if (head !== undefined) answer.body.resume();
}

/** The pump's end, told on as the attempt's outcome; and the gate's opening, which writes the client's head. */
class StreamEnd implements PumpListener, GateOpener {
  readonly #answer: UpstreamAnswer;
  readonly #client: ClientSide;
  readonly #options: StreamOptions;
  readonly #reader: AnswerReader;
  readonly #end: OutcomeListener;

  constructor(answer: UpstreamAnswer, client: ClientSide, options: StreamOptions, reader: AnswerReader, end: OutcomeListener) {
    this.#answer = answer;
    this.#client = client;
    this.#options = options;
    this.#reader = reader;
    this.#end = end;
  }

  /**
   * The client's head. A pumped answer may break off short of a declared length; sent chunked, its
   * end is explicit (an SSE stream then ends cleanly instead of leaving the client waiting for missing bytes).
   */
  gateOpened(): void {
    this.#client.exchange.firstTokenCame();
    this.#client.res.writeHead(this.#answer.status, clientHead(this.#answer, this.#client));
  }

  onThrew(error: unknown): void {
    this.#end.threw(error);
  }

  onPumped(pumped: PumpResult): void {
    let outcome: AttemptOutcome;
    try {
      outcome = streamOutcome(this.#answer, this.#client, this.#options, this.#reader, pumped);
    } catch (error) {
      this.#end.threw(error);
      return;
    }
    this.#end.ended(outcome);
  }
}

/** What the pumped answer means; a broken one has its response ended here. */
function streamOutcome(
  answer: UpstreamAnswer,
  client: ClientSide,
  options: StreamOptions,
  reader: AnswerReader,
  pumped: PumpResult,
): AttemptOutcome {
  const { res } = client;
  const { eventStream } = options;
  if (!pumped.opened) return unopened(answer, client, pumped);
  const firstByteMs = pumped.firstByteAt === undefined ? undefined : pumped.firstByteAt - client.startedMs;
  // Only an answer's own success states what it used; an error passed on used nothing to count.
  // A stream cut short is charged what the node reported last, never less than what was relayed.
  const usage = (): AnswerUsage | undefined => (answer.status < 300 ? reader.usage(pumped.ok ? 'whole' : 'cut') : undefined);
  const tokens = eventStream ? pumped.timing.times(client.startedMs) : undefined;
  if (pumped.ok) {
    const used = usage();
    const decode =
      answer.status === 200
        ? pumped.timing.decodeSample(client.sentMs, used?.counted === 'usage' ? used.completionTokens : undefined)
        : undefined;
    return { kind: 'delivered', status: answer.status, firstByteMs, usage: used, tokens, decode };
  }
  if (pumped.clientGone || client.exchange.clientLeft()) return { kind: 'client_gone', status: answer.status, usage: usage() };
  const framing = eventStream ? 'sse' : options.ndjson === true ? 'ndjson' : undefined;
  const ending =
    framing === undefined
      ? undefined
      : streamBreakBytes(reader, options.errorDialect, framing, pumped.error, pumped.trailingLineEnds);
  if (ending !== undefined) res.end(ending);
  else res.destroy();
  return { kind: 'broken', status: answer.status, error: pumped.error, firstByteMs, usage: usage(), tokens };
}

/**
 * A gated stream that ended before its gate opened: nothing reached the client. The client left,
 * or the node failed before its first token (the deadline, the total timeout, a break): another node may serve.
 */
function unopened(answer: UpstreamAnswer, client: ClientSide, pumped: PumpResult): AttemptOutcome {
  const { exchange } = client;
  if (pumped.clientGone || exchange.clientLeft()) return { kind: 'client_gone', status: answer.status };
  const silent = exchange.firstTokenTimeout();
  if (silent !== undefined) return { kind: 'failed', result: 'timeout', error: silent, status: answer.status };
  if (exchange.timedOut()) {
    return { kind: 'failed', result: 'timeout', error: `no answer within ${exchange.totalTimeoutMs}ms`, status: answer.status };
  }
  const failure = classify(pumped.cause ?? new Error(pumped.error));
  return { kind: 'failed', result: failure.result, error: `before its first token: ${failure.error}`, status: answer.status };
}
