// The mesh's half of a request worker's link (core/cross-thread.ts): the owner's side here; the
// worker's side (worker-mesh.ts, which loads libp2p's key codec) is imported by the request
// plane's feature list only when a worker starts one.

export { meshOwnerSide, type WorkersMeshSource } from './owner-mesh.ts';
export { MESH_CROSSING, type MeshInit, type MeshOwnerMessage, type MeshWorkerMessage } from './mesh-messages.ts';
export { sitesFromWire, sitesSignature, sitesToWire, SiteMirror, type SiteWire } from './site-mirror.ts';
