// The replay record's file (replay-record.ts says what it holds): beside the key the site's
// libp2p identity is read from — `[mesh] peer_key_file` when set (each replica of a site has its
// own), else `key_file` — as `<that file>.replay.json`. Read bounded; written atomically and
// durably (a temporary file in the same directory, mode 0600, fsync; rename; fsync of the
// directory), so a crash leaves the old record or the new one, never a torn one.

import { access, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { RecordRead } from './replay-record.ts';

/** Where a site keeps its replay record: beside its peer key file when set, else beside its key file. */
export function replayRecordFileFor(mesh: { readonly keyFile: string; readonly peerKeyFile?: string | undefined }): string {
  return `${mesh.peerKeyFile ?? mesh.keyFile}.replay.json`;
}

export interface ReplayRecordStore {
  /** Its path (named in logs). */
  readonly path: string;
  /** The file's text, absent, or why it could not be read (larger than `maxBytes` included). */
  read(maxBytes: number): Promise<RecordRead>;
  /** Replaces the file atomically and durably; throws naming the file and the cause. */
  write(text: string): Promise<void>;
  /** Removes the file (absent is fine); throws naming the file and the cause. */
  remove(): Promise<void>;
}

export function replayRecordFile(path: string): ReplayRecordStore {
  let sequence = 0;
  return {
    path,
    async read(maxBytes) {
      try {
        return { kind: 'text', text: await readBounded(path, maxBytes) };
      } catch (error) {
        if (isErrno(error, 'ENOENT')) return { kind: 'absent' };
        return { kind: 'unreadable', problem: message(error) };
      }
    },
    async write(text) {
      sequence += 1;
      const temp = `${path}.${process.pid}.${sequence}.tmp`;
      try {
        const handle = await open(temp, 'wx', 0o600);
        try {
          await handle.writeFile(text);
          await handle.sync();
        } finally {
          await handle.close();
        }
        await rename(temp, path);
        await syncDirectory(dirname(path));
      } catch (error) {
        await rm(temp, { force: true }).catch(() => undefined);
        throw new Error(`replay record ${path}: cannot write it (${message(error)})`, { cause: error });
      }
    },
    async remove() {
      try {
        await rm(path, { force: true });
      } catch (error) {
        throw new Error(`replay record ${path}: cannot remove it (${message(error)})`, { cause: error });
      }
    },
  };
}

/** Whether a file exists (another sign that this site ran before). */
export async function fileExists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

async function readBounded(path: string, maxBytes: number): Promise<string> {
  const handle = await open(path, 'r');
  try {
    // Sized by the file (it may grow while read: the bound still holds), never by the bound alone.
    const { size } = await handle.stat();
    if (size > maxBytes) throw new Error(`larger than ${maxBytes} bytes; not a replay record this gateway wrote`);
    const buffer = Buffer.alloc(size + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > maxBytes) throw new Error(`larger than ${maxBytes} bytes; not a replay record this gateway wrote`);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** The rename is durable once the directory is synced (some filesystems refuse: then the rename stands as it is). */
async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r').catch(() => undefined);
  if (handle === undefined) return;
  try {
    await handle.sync().catch(() => undefined);
  } finally {
    await handle.close();
  }
}

function isErrno(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === code;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
