// The batch runner's series (read at scrape time; none while nothing runs): lines sent, answered
// and kept (done: a 2xx; failed: any other answer, or none kept), sent again, in flight, waiting,
// and the jobs running.

import { Gauge, type Registry } from 'prom-client';
import type { BatchService } from './batch-service.ts';

export function registerBatchMetrics(r: Registry, service: Pick<BatchService, 'figures'>): void {
  const gauge = (name: string, help: string, read: (f: NonNullable<ReturnType<BatchService['figures']>>) => number): void => {
    new Gauge({
      name,
      help,
      registers: [r],
      collect() {
        const figures = service.figures();
        this.reset();
        if (figures !== undefined) this.set(read(figures));
      },
    });
  };
  gauge('gateway_batch_lines_sent', 'Batch lines this process sent into the request plane since it started.', (f) => f.sent);
  gauge('gateway_batch_lines_done', 'Batch lines answered 2xx and kept, since start.', (f) => f.done);
  gauge('gateway_batch_lines_failed', 'Batch lines kept with an error answer (or none), since start.', (f) => f.failed);
  gauge(
    'gateway_batch_lines_again',
    'Batch lines sent again because no node ran them (queue full, no node free, no answer).',
    (f) => f.again,
  );
  gauge('gateway_batch_lines_in_flight', 'Batch lines sent and not yet answered.', (f) => f.inFlight);
  gauge('gateway_batch_lines_waiting', 'Batch lines of running jobs not yet sent.', (f) => f.waiting);
  gauge('gateway_batch_jobs_running', 'Batch jobs in progress, cancelling or finalizing.', (f) => f.jobs);
}
