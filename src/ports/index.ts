// The named ports the request plane reaches the control plane through, and their in-thread
// implementations (the cross-thread ones live in src/workers/).

export { schedulerAdmission, type AdmissionPort } from './admission.ts';
export { registryFleetView, type FleetView } from './fleet-view.ts';
export { registryReports, type FleetReports } from './fleet-reports.ts';
export type { SitesPort, SitesSource } from './sites.ts';
export { inThreadPorts, type RequestPorts } from './request-ports.ts';
