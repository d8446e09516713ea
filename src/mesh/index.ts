export { MeshService, type MeshServiceDeps, type OwnSiteRow } from './mesh-service.ts';
export type { MeshTransport, MeshTransportFactory, MeshTransportStats } from './transport.ts';
export { MemoryBus, MemoryTransport } from './memory-transport.ts';
export type { MeshCodec, MeshJudgeContext } from './mesh-codec.ts';
export type { MeshEvents } from './mesh-events.ts';
export { DISCOVERY_SOURCES, siteSources, type DiscoverySource, type SourceDeps, type SourceModels } from './discovery-source.ts';
export { siteLoad } from './site-load.ts';
export type { SiteAdminRow } from './site-store.ts';
