// The sites port: what the request plane needs of the mesh to forward to other sites and to accept
// their forwards — this site's id, url and key, the remote sites' views, the pins and skew in
// force, and the one memory of accepted signatures. In-thread: the owner's MeshPart link; in a
// worker: WorkerMesh's link over the mirror of the sites and the owner's replay memory.

export type { MeshLink as SitesPort, SitesSource } from '#src/mesh/forwarding/index.ts';
