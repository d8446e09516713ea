// What a client is sent when its stream breaks after it had bytes (the node cut it, went silent past
// body_idle_timeout, the total timeout): a terminal error event in the client's dialect, so the
// client sees an error, never a stream that merely stops. A reader that writes the client another
// API than the node's (a translation) ends it itself (answer-reader.ts, `broke`, in place of
// `flush`); else the endpoint's error dialect words it (http/error-dialect.ts, `streamError`),
// after what the reader still held. Never a [DONE].

import { Buffer } from 'node:buffer';
import type { AnswerReader } from './answer-reader.ts';
import type { ErrorDialect, StreamFraming } from '../http/error-dialect.ts';

/** Why the client's stream ended early, in its terminal event (the node's own words are not repeated). */
export function streamBreakMessage(error: string): string {
  return `the node's answer broke off before it was complete (${error}); what was streamed is incomplete`;
}

/**
 * The separator before the terminal event, from the line ends the client last got (0-2 trailing
 * LFs): an event (or line) cut short is ended first, so the terminal one is read on its own.
 */
export function breakSeparator(framing: StreamFraming, trailingLineEnds: number): string {
  if (framing === 'ndjson') return trailingLineEnds > 0 ? '' : '\n';
  return trailingLineEnds >= 2 ? '' : trailingLineEnds === 1 ? '\n' : '\n\n';
}

/**
 * The bytes that end a broken stream: what the reader still held, then the terminal event.
 * undefined = nothing to end it with (no dialect, no reader's own): the caller closes as before.
 */
export function streamBreakBytes(
  reader: AnswerReader,
  dialect: ErrorDialect | undefined,
  framing: StreamFraming,
  error: string,
  trailingLineEnds: number,
): Buffer | undefined {
  // A translating reader ends the client's stream in the client's API itself (StreamTranslator.fail), in place of flush().
  if (reader.broke !== undefined) return reader.broke(error);
  const rest = reader.flush();
  const message = streamBreakMessage(error);
  if (dialect === undefined) return framing === 'sse' ? rest : undefined;
  // What the reader held is the node's, cut: the line ends the client has are counted after it.
  const ends = rest.length === 0 ? trailingLineEnds : trailingLineEndsOf(rest, trailingLineEnds);
  const ending = Buffer.from(breakSeparator(framing, ends) + dialect.streamError(message, framing));
  return rest.length === 0 ? ending : Buffer.concat([rest, ending]);
}

const LF = 0x0a;

/** The trailing LFs (up to 2) of what the client got, once `more` is added to it. */
export function trailingLineEndsOf(more: Buffer, before: number): number {
  const n = more.length;
  if (n === 0) return before;
  if (more[n - 1] !== LF) return 0;
  if (n === 1) return before >= 1 ? 2 : 1;
  return more[n - 2] === LF ? 2 : 1;
}
