// A request worker's batch side ([server] workers > 1; batch-crossing.ts): the worker's BatchPort
// over its own connection to the owner's batch file and the same files directory, so the worker
// answers the whole Files and Batch API (uploads stream to disk here, checked line by line here)
// with the same BatchApi as a one-thread gateway. It joins the file (state/state-db.ts `joins`:
// no exclusive check, no migration: the owner did both before its runner started) on first use
// once the owner says the feature runs — or at once for a line the runner signed, which proves it
// runs. A job created or cancelled here wakes the owner's runner at once; the runner is the
// owner's alone (its lines come back through the public listener to a worker's line route, which
// serves them as their job's tenant through the worker's request path).

import type { Clock } from '#src/core/clock.ts';
import type { WorkerSide } from '#src/core/cross-thread.ts';
import { GatewayError } from '#src/core/errors.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import { BatchApi } from './batch-api.ts';
import { BATCH_DEFAULTS, batchSettings, BatchConfigProblem, type BatchSettings } from './batch-config.ts';
import type { BatchInit, BatchOwnerMessage, BatchWorkerMessage } from './batch-crossing.ts';
import { openBatchDb } from './batch-db.ts';
import { BatchFiles } from './batch-files.ts';
import { BATCH_PORT, type BatchPort } from './batch-port.ts';
import { BatchStore } from './batch-store.ts';
import { notServed, notStarted } from './batch-unserved.ts';

export interface BatchWorkerHost {
  /** The config in force in the worker (a reload's, once pushed). */
  readonly config: () => GatewayConfig;
  readonly clock: Clock;
  /** To the owner's side. */
  readonly send: (message: BatchWorkerMessage) => void;
}

export function batchWorkerSide(init: unknown, host: BatchWorkerHost): WorkerSide {
  return new WorkerBatch(init as BatchInit, host);
}

interface Joined {
  readonly store: BatchStore;
  readonly api: BatchApi;
}

class WorkerBatch implements WorkerSide, BatchPort {
  readonly secret: string;
  readonly port: readonly [typeof BATCH_PORT, BatchPort];
  readonly #init: BatchInit;
  readonly #host: BatchWorkerHost;
  #running: boolean;
  #joined: Joined | undefined;
  /** The worker drained: the file stays closed. */
  #closed = false;
  /** The last reason the file could not be joined (said once per reason). */
  #failure: string | undefined;
  #settings: { readonly of: GatewayConfig | undefined; readonly settings: BatchSettings } = {
    of: undefined,
    settings: BATCH_DEFAULTS,
  };

  constructor(init: BatchInit, host: BatchWorkerHost) {
    this.#init = init;
    this.#host = host;
    this.secret = init.secret;
    this.#running = init.running;
    this.port = [BATCH_PORT, this];
  }

  receive(raw: unknown): void {
    const message = raw as BatchOwnerMessage;
    if (message.t === 'running') this.#running = message.running;
  }

  /** The worker drained: its connection to the file closes (the owner's stays open until the gateway stops). */
  close(): void {
    this.#closed = true;
    this.#joined?.store.close();
    this.#joined = undefined;
  }

  served(): BatchApi | GatewayError {
    const config = this.#host.config();
    const why = notServed(config, this.#settingsOf(config));
    if (why !== undefined) return why;
    if (!this.#running) return notStarted();
    return this.#join();
  }

  job(id: string): { readonly tenant: string; readonly endpoint: string } | undefined {
    this.#join();
    return this.#joined?.store.batch(id);
  }

  /** The settings of the config in force (a bad reloaded table keeps the last good ones, as the owner does). */
  #settingsOf(config: GatewayConfig): BatchSettings {
    if (this.#settings.of === config) return this.#settings.settings;
    const settings = batchSettings(config.batch);
    this.#settings = { of: config, settings: settings instanceof BatchConfigProblem ? this.#settings.settings : settings };
    return this.#settings.settings;
  }

  #join(): BatchApi | GatewayError {
    if (this.#joined !== undefined) return this.#joined.api;
    if (this.#closed) return notStarted('This request worker is stopping.');
    const { places } = this.#init;
    const log = (level: 'info' | 'warn' | 'error', fields: Record<string, unknown>, message: string): void =>
      this.#host.send({ t: 'log', level, fields: plain(fields), message });
    try {
      const store = new BatchStore(openBatchDb(places.recordsDir, { log, clock: this.#host.clock, shared: true, joins: true }));
      const api = new BatchApi({
        store,
        files: new BatchFiles(places.filesDir),
        clock: this.#host.clock,
        settings: () => this.#settingsOf(this.#host.config()),
        poke: () => this.#host.send({ t: 'poke' }),
      });
      this.#joined = { store, api };
      return api;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      if (reason !== this.#failure)
        log('error', { err: error }, 'a request worker could not open the batch file; it answers 503 until it can');
      this.#failure = reason;
      return notStarted(`The Files and Batch API could not open its file in this request worker: ${reason}`);
    }
  }
}

/** Errors cross as their stack text. */
function plain(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, value instanceof Error ? value.stack : value]));
}
