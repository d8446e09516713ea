// Where the batch feature keeps its records and files (pure over the config, fixed at start): the
// records in `<state_dir>/batch.sqlite` — or `<shared_dir>/batch.sqlite` with [batch] shared_dir —
// and the files in `<state_dir>/batch-files` (`<shared_dir>/files`), or [batch] files_dir. The
// owner thread opens them; with request workers it tells each worker the same places
// (batch-crossing.ts), so every thread reads and writes the same file and directory.

import { join } from 'node:path';
import type { BatchSettings } from './batch-config.ts';

export interface BatchPlaces {
  /** The directory of the records' file (`batch.sqlite`). */
  readonly recordsDir: string;
  readonly filesDir: string;
  /** The records are opened by other replicas too ([batch] shared_dir). */
  readonly sharedDir: boolean;
}

export function batchPlaces(stateDir: string, settings: Pick<BatchSettings, 'filesDir' | 'sharedDir'>): BatchPlaces {
  const shared = settings.sharedDir;
  return {
    recordsDir: shared ?? stateDir,
    filesDir: settings.filesDir ?? (shared === undefined ? join(stateDir, 'batch-files') : join(shared, 'files')),
    sharedDir: shared !== undefined,
  };
}
