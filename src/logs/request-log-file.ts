// The request log's outputs. A file is appended to; once a batch would take it past
// `requests_max_bytes` it is rotated (PATH → PATH.1 → … → PATH.N, the oldest removed; with N = 0 it
// is truncated), and `reopen` (SIGHUP) closes it and opens PATH again, for a logrotate that moved it
// away. Standard output takes the lines as they come, waiting for the stream to accept each batch.

import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import type { LineOutput } from './line-writer.ts';

export interface FileLimits {
  readonly maxBytes: number;
  readonly keep: number;
}

export class FileOutput implements LineOutput {
  readonly #path: string;
  readonly #limits: FileLimits;
  #handle: FileHandle | undefined;
  #size = 0;

  constructor(path: string, limits: FileLimits) {
    this.#path = path;
    this.#limits = limits;
  }

  /** Opens PATH for appending (created if missing, mode 0640: a request log is for the operator); a write opens it too. */
  async open(): Promise<void> {
    if (this.#handle === undefined) await this.#openNow();
  }

  async #openNow(): Promise<void> {
    const handle = await open(this.#path, 'a', 0o640);
    this.#handle = handle;
    this.#size = (await handle.stat()).size;
  }

  async write(text: string): Promise<void> {
    if (this.#handle === undefined) await this.#openNow();
    const handle = this.#handle;
    if (handle === undefined) throw new Error(`request log ${this.#path} is not open`);
    const bytes = Buffer.from(text, 'utf8');
    await handle.write(bytes);
    this.#size += bytes.length;
  }

  size(): number {
    return this.#size;
  }

  full(bytes: number): boolean {
    return this.#size + bytes > this.#limits.maxBytes;
  }

  async rotate(): Promise<void> {
    await this.#closeNow();
    const { keep } = this.#limits;
    if (keep === 0) {
      await rm(this.#path, { force: true });
    } else {
      await rm(`${this.#path}.${keep}`, { force: true });
      for (let n = keep - 1; n >= 1; n--) await renameIfThere(`${this.#path}.${n}`, `${this.#path}.${n + 1}`);
      await renameIfThere(this.#path, `${this.#path}.1`);
    }
    await this.#openNow();
  }

  async reopen(): Promise<void> {
    await this.#closeNow();
    await this.#openNow();
  }

  close(): Promise<void> {
    return this.#closeNow();
  }

  async #closeNow(): Promise<void> {
    const handle = this.#handle;
    this.#handle = undefined;
    await handle?.close();
  }
}

async function renameIfThere(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'ENOENT')) throw error;
  }
}

/** Standard output (or any stream): each batch waits until the stream takes it. */
export class StreamOutput implements LineOutput {
  readonly #stream: Writable;

  constructor(stream: Writable) {
    this.#stream = stream;
  }

  write(text: string): Promise<void> {
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    this.#stream.write(text, (error) => (error ? reject(error) : resolve()));
    return promise;
  }

  size(): number {
    return 0;
  }

  full(): boolean {
    return false;
  }

  async rotate(): Promise<void> {}

  async reopen(): Promise<void> {}

  async close(): Promise<void> {}
}
