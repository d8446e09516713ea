// JSONL as it streams in: bytes → whole lines, each with its number (from 1), across chunk
// boundaries, without holding more than one line. A line longer than the bound is reported by its
// number and skipped to its end, not held.

export interface SplitLine {
  readonly line: number;
  /** Its text (UTF-8), without the newline (and a CR before it); undefined = longer than the bound. */
  readonly text: string | undefined;
}

export class LineSplitter {
  readonly #maxLineBytes: number;
  readonly #emit: (line: SplitLine) => void;
  #parts: Buffer[] = [];
  #held = 0;
  #overlong = false;
  #line = 0;

  constructor(maxLineBytes: number, emit: (line: SplitLine) => void) {
    this.#maxLineBytes = maxLineBytes;
    this.#emit = emit;
  }

  /** The lines seen so far (a last line without a newline counts once end() ran). */
  get lines(): number {
    return this.#line;
  }

  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.#add(chunk.subarray(start, nl));
      this.#finish();
      start = nl + 1;
    }
    this.#add(chunk.subarray(start));
  }

  /** The input ended: its last line, if it has no newline. */
  end(): void {
    if (this.#held > 0 || this.#overlong) this.#finish();
  }

  #add(part: Buffer): void {
    if (part.length === 0 || this.#overlong) return;
    this.#held += part.length;
    if (this.#held > this.#maxLineBytes) {
      this.#overlong = true;
      this.#parts = [];
      return;
    }
    this.#parts.push(part);
  }

  #finish(): void {
    this.#line += 1;
    if (this.#overlong) this.#emit({ line: this.#line, text: undefined });
    else {
      const text = Buffer.concat(this.#parts).toString('utf8');
      this.#emit({ line: this.#line, text: text.endsWith('\r') ? text.slice(0, -1) : text });
    }
    this.#parts = [];
    this.#held = 0;
    this.#overlong = false;
  }
}
