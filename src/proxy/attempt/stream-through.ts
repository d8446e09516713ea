// The streaming strategy: the node's answer goes to the client chunk by chunk as it arrives. Once
// the head is sent there is no failing over: a break ends the response (an SSE stream cleanly, with
// no invented [DONE]; anything else by closing the socket, so the client cannot take it as whole).
// Driven by the pump's callbacks: the outcome is told to the attempt, no promise between.

import type { AnswerUsage } from './answer-usage.ts';
import type { AttemptOutcome, OutcomeListener } from './attempt-outcome.ts';
import { pumpTo, type PumpListener, type PumpResult } from './pump.ts';
import type { AnswerReader } from './answer-reader.ts';
import type { AnswerRewrite } from './answer-rewrite.ts';
import { UsageStrip, type UsageAsked } from './usage-strip.ts';
import { UsageWatch } from './usage-watch.ts';
import { clientHead, type ClientSide, type UpstreamAnswer } from './upstream-answer.ts';

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
}

/** A stream the gateway asked for usage is framed and stripped; any other answer passes as it came. */
function readerFor(options: StreamOptions): AnswerReader {
  if (options.eventStream) {
    const reader = options.usageAsked !== undefined ? new UsageStrip(options.usageAsked) : new UsageWatch('sse');
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
  const { res } = client;
  const { head } = options;
  // A pumped answer may break off short of a declared length; sent chunked, its end is explicit
  // (an SSE stream then ends cleanly instead of leaving the client waiting for missing bytes).
  res.writeHead(answer.status, clientHead(answer, client));
  const reader = readerFor(options);
  if (head !== undefined) {
    client.exchange.heldBytesWritten();
    res.write(reader.pass(head));
  }
  pumpTo(answer.body, res, client.clock, reader, new StreamEnd(answer, client, options.eventStream, reader, end));
  // holdBody paused a body it stopped reading; a new 'data' listener does not restart it.
  if (head !== undefined) answer.body.resume();
}

/** The pump's end, told on as the attempt's outcome. */
class StreamEnd implements PumpListener {
  readonly #answer: UpstreamAnswer;
  readonly #client: ClientSide;
  readonly #eventStream: boolean;
  readonly #reader: AnswerReader;
  readonly #end: OutcomeListener;

  constructor(answer: UpstreamAnswer, client: ClientSide, eventStream: boolean, reader: AnswerReader, end: OutcomeListener) {
    this.#answer = answer;
    this.#client = client;
    this.#eventStream = eventStream;
    this.#reader = reader;
    this.#end = end;
  }

  onPumped(pumped: PumpResult): void {
    let outcome: AttemptOutcome;
    try {
      outcome = streamOutcome(this.#answer, this.#client, this.#eventStream, this.#reader, pumped);
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
  eventStream: boolean,
  reader: AnswerReader,
  pumped: PumpResult,
): AttemptOutcome {
  const { res } = client;
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
  if (eventStream) res.end(reader.broke?.(pumped.error) ?? reader.flush());
  else res.destroy();
  return { kind: 'broken', status: answer.status, error: pumped.error, firstByteMs, usage: usage(), tokens };
}
