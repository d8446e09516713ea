// The workers' public surface. The worker pool itself (worker_threads, the link, the desks) is
// imported only by `startRequestWorkers`, i.e. only with `[server] workers > 1`: a one-thread
// gateway never loads it (issue 28, lean process).
import type { RequestWorkers, RequestWorkersOptions } from './request-workers.ts';

export type { RequestWorkers, RequestWorkersOptions, WorkerStatus } from './request-workers.ts';
export { acceptRelayed } from './relay.ts';
export { sumPoolFigures } from './figures.ts';
export type { WorkerFigures, RelayTarget } from './protocol.ts';

/** Starts the request workers (loading their modules now, on first use). */
export async function startRequestWorkers(options: RequestWorkersOptions): Promise<RequestWorkers> {
  const { RequestWorkers } = await import('./request-workers.ts');
  return RequestWorkers.start(options);
}
export { PlaneHostFigures, type PlaneHosts } from './plane-hosts.ts';
