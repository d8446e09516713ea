// The request log (`[log] requests`): one JSON line per request as it ends, from the owner's
// `proxy:request-finished` (a worker's events are bridged to the owner: one writer with any number
// of workers). Off: no line is built or written. Either way the last requests are kept in memory
// (`recent`, request-ring.ts: GET /admin/requests). See docs/observability.md.

import type { Writable } from 'node:stream';
import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { LogConfig } from '#src/logs/request-log-config.ts';
import type { ReportsTable } from '#src/core/request-fields.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import { LineWriter, type LineFigures, type LineOutput } from './line-writer.ts';
import { FileOutput, StreamOutput } from './request-log-file.ts';
import { requestLineText } from './request-line.ts';
import { REQUEST_RING_SIZE, RequestRing } from './request-ring.ts';

export interface RequestLogDeps {
  readonly clock: Clock;
  readonly events: EventBus<ProxyEvents>;
  /** Standard output (injectable for tests). */
  readonly stdout: Writable;
  /** A write that failed (told once per failing spell). */
  readonly onError: (error: unknown) => void;
  /** What each feature's own fields of a request add to its line (the feature list's; core/request-fields.ts). */
  readonly reports: () => ReportsTable;
}

export class RequestLog {
  /** The last finished requests, kept whether or not lines are written (the dashboard's Requests view). */
  readonly recent: RequestRing;
  readonly #writer: LineWriter | undefined;
  readonly #file: FileOutput | undefined;
  readonly #unsubscribe: () => void;

  constructor(config: LogConfig | undefined, deps: RequestLogDeps) {
    this.recent = new RequestRing(deps.clock, deps.events, REQUEST_RING_SIZE, deps.reports);
    const target = config?.requests ?? { kind: 'off' };
    if (config === undefined || target.kind === 'off') {
      this.#unsubscribe = () => undefined;
      return;
    }
    this.#file =
      target.kind === 'file'
        ? new FileOutput(target.path, { maxBytes: config.requestsMaxBytes, keep: config.requestsKeep })
        : undefined;
    const output: LineOutput = this.#file ?? new StreamOutput(deps.stdout);
    const writer = new LineWriter(output, config.requestsBufferLines, deps.onError);
    this.#writer = writer;
    this.#unsubscribe = deps.events.on('proxy:request-finished', (e) =>
      writer.write(requestLineText(e, deps.clock.now(), deps.reports)),
    );
  }

  /** Opens the file at start, so a path that cannot be written stops the start with the reason. */
  async open(): Promise<void> {
    await this.#file?.open();
  }

  /** SIGHUP: the file is closed and opened again between two writes (no line lost). */
  reopen(): Promise<void> {
    return this.#writer?.reopen() ?? Promise.resolve();
  }

  /** Resolves once the lines of requests finished so far are written. */
  flushed(): Promise<void> {
    return this.#writer?.flushed() ?? Promise.resolve();
  }

  figures(): LineFigures | undefined {
    return this.#writer?.figures();
  }

  async close(): Promise<void> {
    this.recent.close();
    this.#unsubscribe();
    await this.#writer?.close();
  }
}
