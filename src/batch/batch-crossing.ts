// [server] workers > 1: the batch feature's crossing between the owner thread and the request
// workers (core/cross-thread.ts). Every worker answers the whole Files and Batch API itself, over
// its own connection to the batch file (node:sqlite connections belong to the thread that opened
// them; WAL lets each read while another writes, and a write waits for another's) and the same
// files directory — an upload streams to disk in the worker that took it —, while the owner thread
// created and migrated the file and runs the one runner (batch-worker-side.ts; docs/batch.md,
// "With request workers"). What crosses is small:
//   owner → worker, at its start: the secret that signs the runner's lines, where the records and
//   files lie, and whether the API is served (the owner's runner has started); then each change of that;
//   worker → owner: a job was created or cancelled (the runner looks at once), and the side's log lines.

import type { OwnerSide } from '#src/core/cross-thread.ts';
import type { BatchPlaces } from './batch-places.ts';
import type { RunnerLog } from './batch-runner.ts';

export const BATCH_CROSSING = 'batch';

/** What a worker's side starts with. */
export interface BatchInit {
  readonly secret: string;
  readonly places: BatchPlaces;
  /** The owner's batch feature has started (its file is open and migrated, its runner runs). */
  readonly running: boolean;
}

export type BatchOwnerMessage = { readonly t: 'running'; readonly running: boolean };

export type BatchWorkerMessage =
  | { readonly t: 'poke' }
  | {
      readonly t: 'log';
      readonly level: 'info' | 'warn' | 'error';
      readonly fields: Readonly<Record<string, unknown>>;
      readonly message: string;
    };

/** What the owner's side reads of the owner's batch service. */
export interface BatchOwnerSource {
  readonly secret: string;
  readonly places: BatchPlaces;
  running(): boolean;
  /** A job was created or cancelled on a worker: the runner looks at once. */
  poke(): void;
  readonly log: RunnerLog;
}

export function batchOwnerSide(source: BatchOwnerSource): OwnerSide {
  const told = { running: source.running() };
  return {
    name: BATCH_CROSSING,
    init: (): BatchInit => ({ secret: source.secret, places: source.places, running: source.running() }),
    changes: (): readonly BatchOwnerMessage[] => {
      const running = source.running();
      if (running === told.running) return [];
      told.running = running;
      return [{ t: 'running', running }];
    },
    link: () => ({
      receive: (raw) => {
        const message = raw as BatchWorkerMessage;
        if (message.t === 'poke') source.poke();
        else source.log(message.level, { ...message.fields }, message.message);
      },
      close: () => {},
    }),
  };
}
