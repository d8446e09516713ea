// The owner's side of the site key's crossing to a request worker (worker-mesh.ts reads it there):
// apart from the worker's mesh part, so the owner, with or without [mesh], never loads libp2p for it.

import type { SiteKey } from '#src/mesh/site-key.ts';

/** The key as it crosses to a worker (undefined until the mesh part has loaded it). */
export function keyPemOf(key: SiteKey | undefined): string | undefined {
  return key?.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}
