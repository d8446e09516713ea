// The batch runner over its real file (a temporary state_dir) with a manual clock, a pacing that
// says what the test says, and a send that holds each line until the test answers it.
import { join } from 'node:path';
import { ManualClock } from '#src/core/clock.ts';
import { BatchApi } from '#src/batch/batch-api.ts';
import { BATCH_DEFAULTS, type BatchSettings } from '#src/batch/batch-config.ts';
import { openBatchDb } from '#src/batch/batch-db.ts';
import { BatchFiles } from '#src/batch/batch-files.ts';
import type { BatchRow, LineRow } from '#src/batch/batch-rows.ts';
import { BatchRunner, type SentLine } from '#src/batch/batch-runner.ts';
import { BatchStore } from '#src/batch/batch-store.ts';
import type { StateWriteFaults } from '#src/state/index.ts';
import { keptLog } from '#test/fixtures/state-dirs.ts';

export interface HeldLine {
  readonly job: BatchRow;
  readonly line: LineRow;
  answer(sent: SentLine): void;
}

export interface Harness {
  readonly clock: ManualClock;
  readonly store: BatchStore;
  readonly files: BatchFiles;
  readonly api: BatchApi;
  readonly runner: BatchRunner;
  /** Every line sent, in order (held until answered). */
  readonly sent: HeldLine[];
  /** Lines sent and not yet answered. */
  held(): HeldLine[];
  /** Moves the clock by `ms` (timers fire) and lets promises and file writes run. */
  turn(ms?: number): Promise<void>;
  /** Turns until `check` holds (bounded). */
  until(check: () => boolean, what: string): Promise<void>;
  /** Closes the file without stopping the runner: what a crash leaves. */
  crash(): void;
  stop(): Promise<void>;
}

export const ok = (body: unknown = { object: 'chat.completion', model: 'm' }): SentLine => ({
  kind: 'answer',
  status: 200,
  headers: {},
  body: JSON.stringify(body),
  requestId: 'r',
});

export function startHarness(
  dir: string,
  options: {
    clock?: ManualClock;
    room?: (model: string, own: number, cap: number) => number;
    settings?: Partial<BatchSettings>;
    /** Opened to be joined by other connections (request workers'), not held exclusively. */
    shared?: boolean;
    /** Makes the file's commits fail while it says so. */
    faults?: StateWriteFaults;
  } = {},
): Harness {
  const clock = options.clock ?? new ManualClock();
  const { log } = keptLog();
  const settings: BatchSettings = { ...BATCH_DEFAULTS, ...options.settings };
  const db = openBatchDb(dir, { log, clock, shared: options.shared === true, faults: options.faults });
  const store = new BatchStore(db);
  const files = new BatchFiles(join(dir, 'files'));
  const sent: HeldLine[] = [];
  const answered = new Set<HeldLine>();
  const room = options.room ?? ((_model: string, own: number, cap: number) => Math.min(cap, Math.max(0, 4 - own)));
  const runner = new BatchRunner({
    store,
    files,
    clock,
    settings: () => settings,
    room,
    send: (job, line) =>
      new Promise<SentLine>((resolve) => {
        const held: HeldLine = {
          job,
          line,
          answer: (answer) => {
            answered.add(held);
            resolve(answer);
          },
        };
        sent.push(held);
      }),
    log,
  });
  const api = new BatchApi({ store, files, clock, settings: () => settings, poke: () => runner.poke() });
  const turn = async (ms = 30): Promise<void> => {
    clock.advance(ms);
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  return {
    clock,
    store,
    files,
    api,
    runner,
    sent,
    held: () => sent.filter((h) => !answered.has(h)),
    turn,
    async until(check, what) {
      for (let i = 0; i < 2_000; i++) {
        if (check()) return;
        await turn();
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      throw new Error(`never: ${what}`);
    },
    crash: () => db.close(),
    stop: async () => {
      await runner.stop();
      store.close();
    },
  };
}

/** Writes `lines` as an input file of `tenant` and creates a chat batch over it; the job's id. */
export async function createJob(h: Harness, lines: readonly string[], tenant = 'default', window = '24h'): Promise<string> {
  const id = `file-${Math.random().toString(16).slice(2)}`;
  const { bytes } = await h.files.write(id, lines);
  const now = h.clock.now();
  h.store.addFile({
    id,
    tenant,
    purpose: 'batch',
    filename: 'in.jsonl',
    bytes,
    lines: lines.length,
    createdMs: now,
    expiresMs: now + 86_400_000,
  });
  const created = await h.api.createBatch(tenant, {
    input_file_id: id,
    endpoint: '/v1/chat/completions',
    completion_window: window,
  });
  if (created instanceof Error) throw created;
  return String(created.id);
}

export function chat(customId: string, model = 'm'): string {
  return JSON.stringify({
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model, messages: [{ role: 'user', content: customId }] },
  });
}
