// Counting the tokens of a stream as it passes, for a stream cut short before it stated its usage
// (docs/tenants.md, "Usage accounting"). The servers send one event per generated token (llama.cpp,
// vLLM, SGLang, Ollama; the Responses API's `response.output_text.delta`; Anthropic's
// `content_block_delta`), so the count is of string members that carry generated text and are not
// empty: `content`, `reasoning_content`, `reasoning`, `text`, `delta`, `arguments`, `thinking`,
// `partial_json`. An approximation: a server that batches several tokens into one event is
// undercounted, an event carrying two choices counts twice. No parsing: native byte searches.

import { Buffer } from 'node:buffer';

const KEYS: readonly Buffer[] = ['content', 'reasoning_content', 'reasoning', 'text', 'delta', 'arguments', 'thinking', 'partial_json'].map((k) => Buffer.from(`"${k}`));
const SEPARATORS: readonly Buffer[] = [Buffer.from('":"'), Buffer.from('": "')];
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Bytes a marker may span before its value begins (the longest key with its quotes, and `": "`), and more. */
const MARKER_SPAN = 24;

/** Whether one of KEYS (with its opening quote) ends just before `at`. */
function keyBefore(bytes: Buffer, at: number): boolean {
  return KEYS.some((key) => at >= key.length && bytes.compare(key, 0, key.length, at - key.length, at) === 0);
}

/**
 * The generated-text members in `bytes` whose value starts at or after `from`: a key above, its
 * separator, then a string that is not empty. `"x\":"` inside a string never matches: its quote is escaped.
 */
export function countTokenMarkers(bytes: Buffer, from = 0): number {
  let found = 0;
  for (const separator of SEPARATORS) {
    for (let at = bytes.indexOf(separator, Math.max(0, from - separator.length)); at !== -1; at = bytes.indexOf(separator, at + 1)) {
      const valueAt = at + separator.length;
      if (valueAt < from || valueAt >= bytes.length) continue;
      if (bytes[valueAt] === QUOTE || bytes[at - 1] === BACKSLASH) continue;
      if (keyBefore(bytes, at)) found += 1;
    }
  }
  return found;
}

/** Counts markers over a stream's chunks, one split between two chunks included, each once. */
export class SeenTokens {
  #count = 0;
  /** The last bytes seen: a marker split over a chunk boundary is found in them plus the next chunk's start. */
  #carry: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    // A marker whose value begins in the chunk's first MARKER_SPAN bytes may start in the carry.
    const edge = Buffer.concat([this.#carry, chunk.subarray(0, MARKER_SPAN)]);
    this.#count += countTokenMarkers(edge, this.#carry.length);
    if (chunk.length > MARKER_SPAN) this.#count += countTokenMarkers(chunk, MARKER_SPAN);
    this.#carry = Buffer.from(chunk.length >= MARKER_SPAN ? chunk.subarray(chunk.length - MARKER_SPAN) : edge.subarray(Math.max(0, edge.length - MARKER_SPAN)));
  }

  get count(): number {
    return this.#count;
  }
}
