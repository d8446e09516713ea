// Counting the tokens of a stream as it passes, for a stream cut short before it stated its usage
// (docs/tenants.md, "Usage accounting"). The servers send one event per generated token (llama.cpp,
// vLLM, SGLang, Ollama; the Responses API's `response.output_text.delta`; Anthropic's
// `content_block_delta`; each line of Ollama's native NDJSON stream), so the count is of string
// members that carry generated text and are not empty: `content`, `reasoning_content`,
// `reasoning`, `text`, `delta`, `arguments`, `thinking`, `partial_json`, and `response` (Ollama's
// `/api/generate`; the Responses API's `response` is an object, never counted). An approximation: a server that batches several tokens into one event is
// undercounted, an event carrying two choices counts twice. No parsing: one regular expression over
// the bytes read as latin1 (one character per byte, so a multi-byte character never hides a marker).

import type { Buffer } from 'node:buffer';

/**
 * A key above, its separator, and a string value whose first character is there and is not its end.
 * A key quoted inside a string never matches: its quotes are escaped (`\"content\":`).
 */
const MARKER = /"(?:content|reasoning_content|reasoning|text|delta|arguments|thinking|partial_json|response)" ?: ?"(?=[^"])/;

/** Characters a marker spans up to its value (the longest key with its quotes, and `" : "`), and more. */
const MARKER_SPAN = 28;

/** The markers in `text` whose value begins at or after `from`. */
export function countTokenMarkers(text: string, from = 0): number {
  return new TokenMarkers().count(text, from);
}

/** The counter with its own search state (a global expression's position), reused chunk after chunk. */
export class TokenMarkers {
  readonly #marker = new RegExp(MARKER.source, 'g');

  count(text: string, from = 0): number {
    const marker = this.#marker;
    marker.lastIndex = 0;
    let found = 0;
    // test(), not exec(): the global expression moves lastIndex past each marker just the same,
    // and no match array (with its matched string) is built per token.
    while (marker.test(text)) if (marker.lastIndex >= from) found += 1;
    return found;
  }
}

/** Counts markers over a stream's chunks, one split between two chunks included, each once. */
export class SeenTokens {
  readonly #markers = new TokenMarkers();
  #count = 0;
  /** The end of what was seen: a marker split over a chunk boundary is found in it plus the next chunk. */
  #carry = '';

  push(chunk: Buffer): void {
    const text = this.#carry + chunk.toString('latin1');
    // A marker is counted where its value begins: in this chunk, not in the carry (counted before).
    this.#count += this.#markers.count(text, this.#carry.length);
    this.#carry = text.slice(-MARKER_SPAN);
  }

  get count(): number {
    return this.#count;
  }
}
