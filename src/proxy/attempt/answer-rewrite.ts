// An answer the client gets in another API than the one the node speaks (a translation: the request
// feature in src/proxy/translate/ sets it for the whole request). The attempt asks it at the three
// places an answer is written: a whole 2xx JSON answer, a 2xx event stream, and a node's error body.
// Absent (every untranslated request) = the node's answer as it came.

import type { ErrorDialect } from '../http/error-dialect.ts';
import type { AnswerReader } from './answer-reader.ts';

export interface AnswerRewrite {
  /** The node's whole 2xx JSON answer, parsed → the client's JSON body. */
  json(parsed: unknown): string;
  /**
   * The reader of the node's 2xx event stream whose `pass` gives the client's events; `inner` reads
   * the node's own events for the usage and the token timing, and is asked for them.
   */
  stream(inner: AnswerReader): AnswerReader;
  /** How a node's error answer is worded for the client (every 3xx-5xx passed on is read and reworded). */
  readonly errors: ErrorDialect;
}
