// Keeps a site's forward replay memory across clean restarts (the thread that holds the memory:
// the owner thread with `[server] workers` > 1). At start: read the record the run before left,
// decide the rule (replay-record.ts), write this run's "running" record — before any forward is
// taken, so a crash leaves it — then open the memory with the memory carried in, or with the
// blackout. At a clean stop: seal the memory (no forward taken after) and write the "stopped"
// record. Every failure is logged naming the file and falls back to the blackout rule, which needs
// no file; a stale "stopped" record this run cannot replace is removed, and if it cannot be, this
// run takes no forward at all — the next start would trust it and miss what this run accepted.

import {
  RECORD_BYTES_BASE,
  RECORD_BYTES_PER_ENTRY,
  restartRule,
  serializeRunning,
  serializeStopped,
  type RecordOwner,
} from './replay-record.ts';
import type { ReplayRecordStore } from './replay-record-file.ts';
import { firstAcceptedCreatedMs } from './replay-window.ts';
import type { SeenForwards } from './seen-forwards.ts';

/** Where the keeper logs (a pino logger is one). */
export interface ReplayKeeperLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface ReplayKeeperDeps {
  readonly store: ReplayRecordStore;
  readonly seen: Pick<SeenForwards, 'open' | 'seal'>;
  readonly now: () => number;
  readonly log: ReplayKeeperLog;
  /** `[mesh] max_remembered_forwards` now: a record holding more was not written by this config. */
  readonly maxEntries: () => number;
  /** `[mesh] max_clock_skew` (ms) now: the blackout's end, and the skew the record's windows were reckoned with. */
  readonly skewMs: () => number;
  /** Whether this site ran before, whatever the record says (its mesh state file exists). */
  readonly ranBefore: () => Promise<boolean>;
}

export class ReplayKeeper {
  readonly #deps: ReplayKeeperDeps;
  #run: { readonly owner: RecordOwner; readonly startedMs: number } | undefined;

  constructor(deps: ReplayKeeperDeps) {
    this.#deps = deps;
  }

  /** Restores the memory from the record and opens it (once; `startedMs`: when this memory began). */
  async restore(owner: RecordOwner, startedMs: number): Promise<void> {
    if (this.#run !== undefined) return;
    const { store, seen, now, log } = this.#deps;
    const maxEntries = this.#deps.maxEntries();
    const read = await store.read(RECORD_BYTES_BASE + maxEntries * RECORD_BYTES_PER_ENTRY);
    const rule = restartRule(read, {
      ...owner,
      file: store.path,
      nowMs: now(),
      skewMs: this.#deps.skewMs(),
      maxEntries,
      ranBefore: await this.#deps.ranBefore(),
    });
    const fields = { file: store.path, rule: rule.rule };
    try {
      await store.write(serializeRunning(owner, startedMs));
    } catch (error) {
      const problem = error instanceof Error ? error.message : String(error);
      if (read.kind !== 'absent' && !(await this.#removed())) {
        log.error(
          { ...fields, err: error },
          `${problem}, nor remove it: a later start would take it for this run's record, so this run refuses every forwarded request (503 replay_unavailable) — fix the file's directory and restart`,
        );
        return;
      }
      // The memory is whole from this start on: a record written at a clean stop is right.
      this.#run = { owner, startedMs };
      seen.open(now());
      log.warn(
        { ...fields, err: error },
        `${problem}: forwards an earlier run could have accepted are refused until ${this.#blackoutEnd(startedMs)}, and so after every restart until it can be written`,
      );
      return;
    }
    this.#run = { owner, startedMs };
    if (rule.rule === 'blackout') {
      seen.open(now());
      const said = `${rule.reason}: forwards an earlier run could have accepted are refused until ${this.#blackoutEnd(startedMs)}`;
      if (rule.warn) log.warn(fields, said);
      else log.info(fields, said);
      return;
    }
    seen.open(now(), rule.rule === 'carry' ? rule.carried : { refusedBeforeMs: 0, used: new Map() });
    log.info(fields, `${rule.reason}: forwards are taken at once`);
  }

  /** Seals the memory and writes what the next run needs; false = not written (the next start takes the blackout). */
  async save(): Promise<boolean> {
    const { store, seen, now, log } = this.#deps;
    const stoppedMs = now();
    const carried = seen.seal(stoppedMs);
    const run = this.#run;
    if (carried === undefined || run === undefined) return false;
    this.#run = undefined;
    try {
      await store.write(serializeStopped(run.owner, run.startedMs, stoppedMs, this.#deps.skewMs(), carried));
    } catch (error) {
      log.error(
        { file: store.path, err: error },
        `${error instanceof Error ? error.message : String(error)}: the next start refuses forwards for max_clock_skew`,
      );
      return false;
    }
    let entries = 0;
    for (const site of carried.used.values()) entries += site.size;
    log.info(
      { file: store.path, remembered: entries },
      'replay memory saved: the next start refuses only the signatures it holds',
    );
    return true;
  }

  async #removed(): Promise<boolean> {
    try {
      await this.#deps.store.remove();
      return true;
    } catch {
      return false;
    }
  }

  #blackoutEnd(startedMs: number): string {
    return new Date(firstAcceptedCreatedMs(startedMs, this.#deps.skewMs())).toISOString();
  }
}
