// `gateway_request_log_lines_total{outcome}`: the request log's lines written, or dropped (the
// output stalled past [log] requests_buffer_lines, or a write failed). Read at scrape time.

import { Counter, type Registry } from 'prom-client';

/** The request log's counts, read at scrape time; undefined = the log is off. */
export type RequestLogFigures = () => { readonly written: number; readonly dropped: number } | undefined;

export function registerRequestLogMetrics(r: Registry, logFigures: RequestLogFigures): void {
  new Counter({
    name: 'gateway_request_log_lines_total',
    help: 'Request log lines by outcome: written, or dropped (the output stalled past [log] requests_buffer_lines, or a write failed).',
    labelNames: ['outcome'],
    registers: [r],
    collect() {
      const figures = logFigures();
      this.reset();
      if (figures === undefined) return;
      this.inc({ outcome: 'written' }, figures.written);
      this.inc({ outcome: 'dropped' }, figures.dropped);
    },
  });
}
