// The Files and Batch API as a feature of the gateway (docs/batch.md): wiring only. Its parts give
// the request plane its port (batch-port.ts: the routes reach the API through it); its lifecycle
// opens and closes the file and the runner (batch-service.ts); with request workers, its crossing
// lets every worker answer the API (batch-crossing.ts).

import type { Registry } from 'prom-client';
import type { AdminAction, AdminView, Feature } from '#src/core/feature.ts';
import type { OwnerSide } from '#src/core/cross-thread.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import { registerBatchMetrics } from './batch-metrics.ts';
import type { BatchPort } from './batch-port.ts';
import { BatchService, type BatchServiceDeps } from './batch-service.ts';

/** What the feature adds to the owner's parts: the request plane's port, and the owner's side of the workers' crossing. */
export interface BatchParts {
  readonly batch: BatchPort;
  readonly workersBatch: OwnerSide;
}

export class BatchFeature implements Feature<GatewayConfig, BatchParts> {
  readonly name = 'batch';
  readonly parts: BatchParts;
  readonly #service: BatchService;

  constructor(config: GatewayConfig, deps: BatchServiceDeps) {
    this.#service = new BatchService(config, deps);
    this.parts = { batch: this.#service, workersBatch: this.#service.crossing };
  }

  start(): void {
    this.#service.start();
  }

  stop(): Promise<void> {
    return this.#service.stop();
  }

  reload(_previous: GatewayConfig, next: GatewayConfig): void {
    this.#service.reload(next);
  }

  metrics(registry: Registry): void {
    registerBatchMetrics(registry, this.#service);
  }

  adminViews(): Readonly<Record<string, AdminView>> {
    return { '/admin/batches': () => this.#service.view() };
  }

  adminActions(): Readonly<Record<string, AdminAction>> {
    return { '/admin/batches/*': ({ path }) => this.#service.adminCancel(path) };
  }

  runtime(): Readonly<Record<string, unknown>> | undefined {
    return this.#service.runtime();
  }
}
