export { RequestWorkers, type RequestWorkersOptions, type WorkerStatus } from './request-workers.ts';
export { acceptRelayed } from './relay.ts';
export { sumPoolFigures } from './figures.ts';
export type { WorkerFigures, RelayTarget } from './protocol.ts';
