// Pure: server-sent events cut into frames, bounded in bytes. Bytes go in as they arrive; out come
// each complete frame's `data` (its `data:` lines joined by "\n"; comments, `event:`, `id:` and
// `retry:` lines are read past). A frame (or the bytes waiting for its end) longer than `maxFrameBytes`
// stops the splitter: the stream is not read further.

export type FrameSplit =
  { readonly ok: true; readonly frames: readonly string[] } | { readonly ok: false; readonly error: string };

export class SseFrames {
  readonly #maxFrameBytes: number;
  #pending = '';
  #pendingBytes = 0;
  readonly #decoder = new TextDecoder('utf-8');

  constructor(maxFrameBytes: number) {
    this.#maxFrameBytes = maxFrameBytes;
  }

  push(chunk: Uint8Array): FrameSplit {
    this.#pending += this.#decoder.decode(chunk, { stream: true });
    this.#pendingBytes += chunk.length;
    const frames: string[] = [];
    for (;;) {
      const end = frameEnd(this.#pending);
      if (end === undefined) break;
      const raw = this.#pending.slice(0, end.at);
      this.#pending = this.#pending.slice(end.at + end.length);
      this.#pendingBytes = Buffer.byteLength(this.#pending);
      if (Buffer.byteLength(raw) > this.#maxFrameBytes) return tooLarge(this.#maxFrameBytes);
      const data = dataOf(raw);
      if (data !== undefined) frames.push(data);
    }
    if (this.#pendingBytes > this.#maxFrameBytes) return tooLarge(this.#maxFrameBytes);
    return { ok: true, frames };
  }
}

function tooLarge(max: number): FrameSplit {
  return { ok: false, error: `a frame exceeds the limit of ${max} bytes` };
}

/** Where the first frame ends (a blank line: "\n\n", "\r\n\r\n" or "\r\r"). */
function frameEnd(text: string): { at: number; length: number } | undefined {
  const match = /\r\n\r\n|\n\n|\r\r/.exec(text);
  return match === null ? undefined : { at: match.index, length: match[0].length };
}

function dataOf(frame: string): string | undefined {
  const data: string[] = [];
  for (const line of frame.split(/\r\n|\n|\r/)) {
    if (line === 'data' || line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  return data.length === 0 ? undefined : data.join('\n');
}
