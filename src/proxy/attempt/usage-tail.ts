// The end of an answer, kept while it passes through, to read the prompt size the node counted
// (`usage.prompt_tokens`, the Responses API's `usage.input_tokens`). Servers put `usage` last (in a
// JSON answer, and in a stream's last chunk), so a few KiB from the end are enough; bounded.

/** Bytes of an answer's end that are kept. */
export const USAGE_TAIL_BYTES = 4096;

const COUNT = /"(?:prompt|input)_tokens"\s*:\s*(\d{1,12})\b/g;

/** Pure: the last prompt-token count stated in `text` (an answer's end), or undefined. */
export function lastPromptTokens(text: string): number | undefined {
  let found: number | undefined;
  for (const match of text.matchAll(COUNT)) found = Number(match[1]);
  return found;
}

export class UsageTail {
  #chunks: Buffer[] = [];
  #bytes = 0;

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    while (this.#chunks.length > 1 && this.#bytes - (this.#chunks[0]?.length ?? 0) >= USAGE_TAIL_BYTES) {
      this.#bytes -= this.#chunks.shift()?.length ?? 0;
    }
  }

  promptTokens(): number | undefined {
    const all = Buffer.concat(this.#chunks);
    return lastPromptTokens(all.subarray(Math.max(0, all.length - USAGE_TAIL_BYTES)).toString('utf8'));
  }
}

/** The count stated at the end of a whole answer held in memory. */
export function heldPromptTokens(bytes: Buffer): number | undefined {
  return lastPromptTokens(bytes.subarray(Math.max(0, bytes.length - USAGE_TAIL_BYTES)).toString('utf8'));
}
