export { adminEndpoints, statusHealthEndpoint } from './admin-endpoints.ts';
export { DashboardHub, type DashboardMesh } from './dashboard/dashboard-hub.ts';
export type { AdminCommands, AdminDeps, MetricsText } from './admin-deps.ts';
export type { HostModelFigures, HostsReport, HostView, NodeSourceRow } from './hosts-view.ts';
export { explainRemote, type ExplainRemote, type ExplainSite } from './explain.ts';
export { runtimeView } from './runtime-view.ts';
