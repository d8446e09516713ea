// A streamed answer held back until its first token (first-token-deadline.ts): nothing — not even
// the head — reaches the client while the node has sent only what precedes generation (a role delta,
// `message_start`, `response.created`, keep-alive comments), so that a node that stays silent past
// the deadline, or breaks off before its first token, can still be failed over. The gate opens on
// the first chunk that carries a token, at the stream's end, or past a small bound in bytes (a node
// that sends that much without a token is answering something: it streams on, unchecked).

import { Buffer } from 'node:buffer';
import { appended } from '#src/core/appended.ts';

/** Bytes held before the first token; past them the stream goes on without a deadline. */
export const FIRST_TOKEN_HOLD_BYTES = 64 * 1024;

/** Told once, when the gate opens: the client's head is written, the deadline cancelled. */
export interface GateOpener {
  gateOpened(): void;
}

export class FirstTokenGate {
  readonly #opener: GateOpener;
  readonly #maxBytes: number;
  #held: Buffer[] | undefined;
  #bytes = 0;

  constructor(opener: GateOpener, maxBytes = FIRST_TOKEN_HOLD_BYTES) {
    this.#opener = opener;
    this.#maxBytes = maxBytes;
  }

  /**
   * A chunk as the client would get it, with the tokens seen so far: held; true = open now. A chunk
   * kept while the gate stays shut is copied: a view would keep the whole socket read it is part of
   * for as long as the node prefills.
   */
  hold(out: Buffer, seenTokens: number): boolean {
    const opens = seenTokens > 0 || this.#bytes + out.length > this.#maxBytes;
    if (out.length > 0) {
      this.#held = appended(this.#held, opens ? out : Buffer.from(out));
      this.#bytes += out.length;
    }
    return opens;
  }

  /** Opens (the opener told): everything held, in order, for the client. */
  open(): Buffer {
    this.#opener.gateOpened();
    const held = this.#held;
    this.#held = undefined;
    if (held === undefined) return EMPTY;
    return held.length === 1 ? (held[0] as Buffer) : Buffer.concat(held, this.#bytes);
  }
}

const EMPTY = Buffer.alloc(0);
