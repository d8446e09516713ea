// The named ports the request plane reaches the control plane through, and their in-thread
// implementations (the owners themselves; the cross-thread ones live in src/workers/).

export type { AdmissionPort } from './admission.ts';
export type { FleetView } from './fleet-view.ts';
export type { FleetReports } from './fleet-reports.ts';
export { ledgerTenantAdmission, type TenantAdmissionPort } from './tenant-admission.ts';
export type { SitesPort, SitesSource } from './sites.ts';
export { inThreadPorts, type RequestPorts } from './request-ports.ts';
