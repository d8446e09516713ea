// The request log feature, wiring only: `[log] requests` (one line per request, written by this
// thread alone; logs/request-log.ts) and the last finished requests kept for GET /admin/requests
// and the dashboard whether or not lines are written. SIGHUP reopens the file; the stop closes it
// once the drain is over, every line written.

import type { Writable } from 'node:stream';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { ReportsTable } from '#src/core/request-fields.ts';
import type { Feature } from '#src/core/feature.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import { RequestLog } from './request-log.ts';
import type { RequestRing } from './request-ring.ts';
import { registerRequestLogMetrics } from './request-log-metrics.ts';

export interface RequestLogFeatureDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly events: EventBus<ProxyEvents>;
  /** Where `[log] requests = "stdout"` writes. */
  readonly stdout: Writable;
  /** What each feature's own fields of a request add to its line and record (the feature list's). */
  readonly reports: () => ReportsTable;
}

/** What the request log adds to the owner's parts (gateway/features.ts names them). */
export interface RequestLogParts {
  /** GET /admin/requests. */
  readonly recentRequests: RequestRing;
  /** SIGHUP's first step: the file is closed and opened again (logrotate moved it), no line lost. */
  readonly reopenLogs: () => Promise<void>;
  /** Resolves once the log holds the lines of every request finished so far. */
  readonly logFlushed: () => Promise<void>;
}

export class RequestLogFeature implements Feature<GatewayConfig, RequestLogParts> {
  readonly name = 'request-log';
  readonly parts: RequestLogParts;
  readonly #log: RequestLog;
  readonly #logger: Logger;

  constructor(config: GatewayConfig['log'], deps: RequestLogFeatureDeps) {
    this.#logger = deps.logger;
    this.#log = new RequestLog(config, {
      clock: deps.clock,
      events: deps.events,
      stdout: deps.stdout,
      reports: deps.reports,
      onError: (error) =>
        deps.logger.error({ err: error }, 'request log write failed; lines are dropped and counted until it works again'),
    });
    this.parts = {
      recentRequests: this.#log.recent,
      reopenLogs: () => this.#log.reopen(),
      logFlushed: () => this.#log.flushed(),
    };
  }

  metrics(registry: Registry): void {
    registerRequestLogMetrics(registry, () => this.#log.figures());
  }

  /** Opens the file, so a path that cannot be written stops the start with the reason. */
  start(): Promise<void> {
    return this.#log.open();
  }

  /** After the drain: the last requests' lines are written, and the file closed. */
  async stop(): Promise<void> {
    await this.#log.close().catch((error: unknown) => this.#logger.error({ err: error }, 'request log close failed'));
  }
}
