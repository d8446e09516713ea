// The files' bytes: one file per id in the files directory (`<state_dir>/batch-files`, or
// [batch] files_dir), created 0600 in a 0700 directory; an upload is written to `<id>.part` and
// renamed into place once it is good; a job's output and error files are written the same way.

import { createReadStream, createWriteStream, mkdirSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';

export class BatchFiles {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  pathOf(id: string): string {
    return join(this.dir, `${id}.jsonl`);
  }

  tempOf(id: string): string {
    return join(this.dir, `${id}.part`);
  }

  /** The temporary file becomes the file `id`. */
  async keep(id: string): Promise<void> {
    await rename(this.tempOf(id), this.pathOf(id));
  }

  read(id: string): Readable {
    return createReadStream(this.pathOf(id));
  }

  async remove(id: string): Promise<void> {
    await rm(this.pathOf(id), { force: true });
    await rm(this.tempOf(id), { force: true });
  }

  /** Writes `lines` (each one JSONL line) as the file `id`; its size in bytes and its line count. */
  async write(id: string, lines: Iterable<string>): Promise<{ bytes: number; lines: number }> {
    const out = createWriteStream(this.tempOf(id), { mode: 0o600 });
    let bytes = 0;
    let count = 0;
    for (const line of lines) {
      const text = `${line}\n`;
      bytes += Buffer.byteLength(text);
      count += 1;
      if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    }
    out.end();
    await finished(out);
    await this.keep(id);
    return { bytes, lines: count };
  }
}
