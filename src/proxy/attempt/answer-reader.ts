// What reads a node's answer while it passes to the client: every chunk goes through `pass`, which
// gives the bytes the client gets (the chunk itself unless the gateway takes out what it added to
// the request), and at the end `usage` says what the answer used (docs/tenants.md, "Usage accounting").

import type { Buffer } from 'node:buffer';
import type { AnswerEnd, AnswerUsage } from './answer-usage.ts';

export interface AnswerReader {
  /** The bytes the client gets for this chunk of the node's answer, in order; empty = none yet. */
  pass(chunk: Buffer): Buffer;
  /** At the end, whole or cut: the bytes still held back, sent as they came. */
  flush(): Buffer;
  /**
   * An event stream broke after the client had bytes: the last bytes it gets, in place of
   * `flush()` (a translated stream's terminal error event); absent = `flush()`.
   */
  broke?(error: string): Buffer;
  /**
   * The tokens the answer used, as far as it got (`end`: it came whole, or was cut short): the
   * node's count when it stated one, else the generated-text events relayed, and for a cut answer
   * never less than those (UsageTally.usage); undefined = it stated none, and nothing was counted.
   */
  usage(end: AnswerEnd): AnswerUsage | undefined;
  /** Generated-text events counted so far (a stream's; 0 for a JSON answer): the stream's token timing reads it. */
  seenTokens(): number;
}
