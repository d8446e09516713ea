// The mesh state file beside the key file: read once at start, written atomically (a temporary
// file in the same directory, then rename) whenever a higher revision was accepted. A missing file
// is an empty state; an unreadable or malformed one is reported and treated as empty, never fatal.

import { open, rename, rm, writeFile } from 'node:fs/promises';
import { MAX_STATE_BYTES, parseRevisionState, serializeRevisionState, type HeldRevisions } from './revision-state.ts';

/** Where the state of the site whose key is `keyFile` lives. */
export function stateFileFor(keyFile: string): string {
  return `${keyFile}.state.json`;
}

/** What the mesh service needs to keep revisions across restarts (tests give a fake). */
export interface RevisionStore {
  /** The held revisions; `problem` says why the file was not used (then the state is empty). */
  read(): Promise<{ readonly revisions: HeldRevisions; readonly problem?: string }>;
  write(revisions: HeldRevisions): Promise<void>;
}

export function revisionStateFile(path: string): RevisionStore {
  let sequence = 0;
  return {
    async read() {
      let text: string;
      try {
        text = await readBounded(path);
      } catch (error) {
        if (isErrno(error, 'ENOENT')) return { revisions: new Map() };
        return {
          revisions: new Map(),
          problem: `mesh state file ${path}: ${error instanceof Error ? error.message : String(error)}`,
        };
      }
      const parsed = parseRevisionState(text);
      return parsed.ok
        ? { revisions: parsed.revisions }
        : { revisions: new Map(), problem: `mesh state file ${path}: ${parsed.problem}` };
    },
    async write(revisions) {
      sequence += 1;
      const temp = `${path}.${process.pid}.${sequence}.tmp`;
      try {
        await writeFile(temp, serializeRevisionState(revisions), { mode: 0o600 });
        await rename(temp, path);
      } catch (error) {
        await rm(temp, { force: true }).catch(() => undefined);
        throw new Error(`mesh state file ${path}: cannot write it (${error instanceof Error ? error.message : String(error)})`, {
          cause: error,
        });
      }
    },
  };
}

async function readBounded(path: string): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(MAX_STATE_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > MAX_STATE_BYTES) throw new Error(`larger than ${MAX_STATE_BYTES} bytes; not a state file`);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

function isErrno(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === code;
}
