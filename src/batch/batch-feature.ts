// The Files and Batch API as a feature of the gateway (docs/batch.md): wiring only. Its parts give
// the request plane its port (batch-port.ts: the routes reach the API through it); its lifecycle
// opens and closes the file and the runner (batch-service.ts).

import type { Registry } from 'prom-client';
import type { AdminAction, AdminView, Feature } from '#src/core/feature.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import { registerBatchMetrics } from './batch-metrics.ts';
import type { BatchPort } from './batch-port.ts';
import { BatchService, type BatchServiceDeps } from './batch-service.ts';

export class BatchFeature implements Feature<GatewayConfig, { readonly batch: BatchPort }> {
  readonly name = 'batch';
  readonly parts: { readonly batch: BatchPort };
  readonly #service: BatchService;

  constructor(config: GatewayConfig, deps: BatchServiceDeps) {
    this.#service = new BatchService(config, deps);
    this.parts = { batch: this.#service };
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
