// The batch feature's parts held together (its feature file, batch-feature.ts, only wires): the
// settings ([batch], batch-config.ts), the file of records and the files directory in
// [server] state_dir, the API the request plane's routes reach (batch-port.ts), the runner and the
// line sender; with [batch] shared_dir, the records and files every replica shares, and the runner
// following the cluster's runner lease (runner-turns.ts); with [server] workers > 1, the crossing
// that lets every request worker answer the API over the same file (batch-crossing.ts). Without a
// state_dir — or with [batch] enabled = false — the routes answer why, and nothing runs.

import { randomBytes } from 'node:crypto';
import type { Clock } from '#src/core/clock.ts';
import { GatewayError } from '#src/core/errors.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import { judgeLoad, type LoadReading, type NodeView } from '#src/nodes/index.ts';
import type { StateWriteFaults } from '#src/state/index.ts';
import { BatchApi, notFound } from './batch-api.ts';
import type { OwnerSide } from '#src/core/cross-thread.ts';
import { notServed, notStarted } from './batch-unserved.ts';
import { batchOwnerSide } from './batch-crossing.ts';
import { batchPlaces, type BatchPlaces } from './batch-places.ts';
import { BATCH_DEFAULTS, batchSettings, BatchConfigProblem, type BatchSettings } from './batch-config.ts';
import { openBatchDb } from './batch-db.ts';
import { BatchFiles } from './batch-files.ts';
import type { BatchPort } from './batch-port.ts';
import { BatchRunner, type RunnerFigures, type RunnerLog } from './batch-runner.ts';
import { BatchStore } from './batch-store.ts';
import { lineSender, type LineSender } from './line-sender.ts';
import { batchRoom } from './pace.ts';
import { batchViewRow, VIEW_JOBS, type BatchViewRow } from './batch-view.ts';
import { RunnerTurns, type RunnerLease } from './runner-turns.ts';

export interface BatchServiceDeps {
  readonly clock: Clock;
  readonly log: RunnerLog;
  readonly config: () => GatewayConfig;
  /** The fleet now, for the pacing: node views, each node's requests in flight, each model's queue. */
  readonly views: () => readonly NodeView[];
  readonly inFlight: (node: string) => number;
  readonly queueDepths: () => Readonly<Record<string, number>>;
  /** A node's own load figures as last scraped ([load]); absent = none read. */
  readonly nodeLoad?: ((node: string) => LoadReading | undefined) | undefined;
  /** This gateway's public listener's URL, once it listens. */
  readonly origin: () => string | undefined;
  readonly faults?: StateWriteFaults | undefined;
  /**
   * [cluster]: asks for the runner lease (one replica runs the jobs of a [batch] shared_dir; asked
   * at construction, before the cluster starts, and only with a shared_dir); absent = no [cluster].
   */
  readonly lease?: (() => RunnerLease) | undefined;
}

const noCluster = (): BatchConfigProblem =>
  new BatchConfigProblem([
    'batch.shared_dir: is shared by the replicas of a [cluster] (its lease lets one of them run the jobs at a time); set [cluster], or remove shared_dir to keep the jobs in [server] state_dir',
  ]);

/** The admin cancel's path: /admin/batches/{id}/cancel (the id as the batch API gave it). */
const ADMIN_CANCEL = /^\/admin\/batches\/([^/]{1,256})\/cancel$/;

interface Running {
  readonly store: BatchStore;
  readonly api: BatchApi;
  readonly runner: BatchRunner;
  readonly sender: LineSender;
  /** [batch] shared_dir: the runner runs while this replica holds the lease. */
  readonly turns: RunnerTurns | undefined;
}

export class BatchService implements BatchPort {
  readonly secret = randomBytes(32).toString('base64url');
  readonly #d: BatchServiceDeps;
  #settings: BatchSettings;
  #running: Running | undefined;
  readonly #lease: RunnerLease | undefined;
  /** Where the records and files lie (fixed at start: [batch] shared_dir and files_dir are read then). */
  readonly #places: BatchPlaces;
  /** [server] workers > 1: the owner's side of the crossing that lets every worker answer the API. */
  readonly crossing: OwnerSide;

  constructor(config: GatewayConfig, deps: BatchServiceDeps) {
    this.#d = deps;
    const settings = batchSettings(config.batch);
    // A bad table fails the start (start() says it); until then the defaults stand.
    this.#settings = settings instanceof BatchConfigProblem ? BATCH_DEFAULTS : settings;
    this.#places = batchPlaces(config.server.stateDir ?? '', this.#settings);
    this.crossing = batchOwnerSide({
      secret: this.secret,
      places: this.#places,
      running: () => this.#running !== undefined,
      poke: () => this.#running?.runner.poke(),
      log: deps.log,
    });
    // Asked only where jobs may run: a replica that never runs them must not hold the lease.
    const runs = this.#settings.sharedDir !== undefined && notServed(config, this.#settings) === undefined;
    this.#lease = runs ? deps.lease?.() : undefined;
  }

  /** Opens the file and takes up the jobs left running; throws (the start fails) on a bad [batch] table or an unusable file. */
  start(): void {
    const config = this.#d.config();
    const settings = batchSettings(config.batch);
    if (settings instanceof BatchConfigProblem) throw settings;
    this.#settings = settings;
    if (config.server.stateDir === undefined || notServed(config, settings) !== undefined) return;
    const { clock } = this.#d;
    const lease = this.#lease;
    const places = this.#places;
    if (places.sharedDir && lease === undefined) throw noCluster();
    // Request workers join the file (batch-crossing.ts): it is not held exclusively then. A second
    // gateway on this state_dir is still refused, by the usage file (held exclusively by the tenants feature).
    const joined = places.sharedDir || config.server.workers !== 1;
    const store = new BatchStore(
      openBatchDb(places.recordsDir, { log: this.#d.log, clock, faults: this.#d.faults, shared: joined }),
    );
    const files = new BatchFiles(places.filesDir);
    const sender = lineSender({
      origin: this.#d.origin,
      secret: this.secret,
      requestTimeoutMs: () => this.#d.config().server.requestTimeoutMs,
      maxAnswerBytes: () => this.#settings.maxAnswerBytes,
    });
    const runner = new BatchRunner({
      store,
      files,
      clock,
      settings: () => this.#settings,
      room: (model, own, cap) =>
        batchRoom({
          model,
          own,
          cap,
          views: this.#d.views(),
          inFlight: this.#d.inFlight,
          queued: this.#d.queueDepths()[model] ?? 0,
          unknownSlots: this.#settings.unknownNodeSlots,
          waitingInside: (node) => this.#waitingInside(node),
        }),
      send: (job, line) => sender.send(job, line),
      log: this.#d.log,
    });
    const api = new BatchApi({ store, files, clock, settings: () => this.#settings, poke: () => runner.poke() });
    const turns =
      !places.sharedDir || lease === undefined
        ? undefined
        : new RunnerTurns(lease, runner, (error) =>
            this.#d.log('error', { err: error }, 'the batch runner could not start or stop on a change of the runner lease'),
          );
    this.#running = { store, api, runner, sender, turns };
    if (turns === undefined) runner.start();
    else turns.start();
  }

  /** Requests a node's own fresh load figures say wait inside it; undefined = no fresh figures. */
  #waitingInside(node: string): number | undefined {
    const reading = this.#d.nodeLoad?.(node);
    if (reading === undefined) return undefined;
    const verdict = judgeLoad(reading, true, this.#d.clock.now(), this.#d.config().load.staleAfterMs);
    return verdict.usable ? verdict.figures.waiting : undefined;
  }

  async stop(): Promise<void> {
    const running = this.#running;
    this.#running = undefined;
    if (running === undefined) return;
    // The lines still in flight (the drain is over) end now: their answers never came, so they go again at the next start.
    const stopping = running.turns?.stop() ?? running.runner.stop();
    await running.sender.close();
    await stopping;
    running.store.close();
  }

  /** A reload's [batch] table: applied live when good; a bad one is logged and the running settings kept. */
  reload(next: GatewayConfig): void {
    const settings = batchSettings(next.batch);
    if (settings instanceof BatchConfigProblem) {
      this.#d.log(
        'error',
        { problems: settings.problems },
        'the reloaded [batch] table is invalid; the running settings are kept',
      );
      return;
    }
    this.#settings = settings;
    this.#running?.runner.poke();
  }

  served(): BatchApi | GatewayError {
    return notServed(this.#d.config(), this.#settings) ?? this.#running?.api ?? notStarted();
  }

  job(id: string): { readonly tenant: string; readonly endpoint: string } | undefined {
    return this.#running?.store.batch(id);
  }

  /**
   * POST /admin/batches/{id}/cancel: the operator's cancel of any tenant's job (as its tenant's own
   * cancel does: new lines stop at once, the lines in flight finish), answered with the batch and its tenant.
   */
  adminCancel(path: string): unknown {
    const api = this.served();
    if (api instanceof GatewayError) return api;
    const id = ADMIN_CANCEL.exec(path)?.[1];
    if (id === undefined)
      return new GatewayError(
        'GW_NOT_FOUND',
        `No admin batch command at ${path.slice(0, 200)}: POST /admin/batches/{id}/cancel.`,
        {
          status: 404,
          openaiType: 'invalid_request_error',
          openaiCode: 'not_found',
        },
      );
    const job = this.#running?.store.batch(id);
    if (job === undefined) return notFound('Batch', id);
    const answer = api.cancel(job.tenant, id);
    return answer instanceof GatewayError ? answer : { ...answer, tenant: job.tenant };
  }

  /** GET /admin/batches: every tenant's latest jobs; an empty list (and why) where nothing runs. */
  view(): { readonly batches: readonly BatchViewRow[]; readonly unavailable?: string } {
    const running = this.#running;
    if (running === undefined) {
      const why = this.served();
      return why instanceof GatewayError ? { batches: [], unavailable: why.message } : { batches: [] };
    }
    const now = this.#d.clock.now();
    return { batches: running.store.recent(VIEW_JOBS).map((job) => batchViewRow(job, running.store.counts(job.id), now)) };
  }

  /** Its part of /admin/runtime; undefined when nothing runs. */
  runtime(): Readonly<Record<string, unknown>> | undefined {
    const figures = this.figures();
    const turns = this.#running?.turns;
    return figures === undefined
      ? undefined
      : { batch: turns === undefined ? figures : { ...figures, runs_jobs: turns.running() } };
  }

  /** The runner's figures and the lines waiting; undefined when nothing runs. */
  figures(): (RunnerFigures & { readonly waiting: number; readonly jobs: number }) | undefined {
    const running = this.#running;
    if (running === undefined) return undefined;
    const jobs = running.store.running();
    const waiting = jobs.reduce((sum, job) => sum + running.store.counts(job.id).waiting, 0);
    return { ...running.runner.figures(), waiting, jobs: jobs.length };
  }
}
