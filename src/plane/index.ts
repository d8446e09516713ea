// The request plane: one builder for every host (the main thread, each request worker), and the
// listeners a gateway opens.

export { buildRequestPlane, type PlaneFigures, type PlaneHost, type PlaneLog, type RequestPlane } from './request-plane.ts';
export { drainServers, listenOn, type DrainOptions, type Listening, type ListenerOptions } from './listener.ts';
export {
  hostTracer,
  sitesFiguresOf,
  spansOf,
  unreachableSites,
  WORKER_SIDES,
  type SitesFigures,
  type WorkerSideHost,
  type WorkerSideStart,
} from './request-features.ts';
