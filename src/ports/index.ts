// The named ports the request plane reaches the control plane through, and their in-thread
// implementations (the owners themselves; the cross-thread ones live in src/workers/). A feature's
// own port (the tenants' admission, the mesh's sites link) is its folder's, carried here under its key.

export type { AdmissionPort } from './admission.ts';
export type { FleetView } from './fleet-view.ts';
export type { FleetReports } from './fleet-reports.ts';
export { inThreadPorts, ownerReports, type AnswerOwner, type RequestPorts } from './request-ports.ts';
export type { SessionPort } from './session-port.ts';
