// The owner's side of the site key's crossing to a request worker (worker-mesh.ts reads it there):
// apart from the worker's mesh link (worker-mesh.ts loads libp2p's key codec), so the owner never loads libp2p for it.

import type { SiteKey } from '../site-key.ts';

/** The key as it crosses to a worker (undefined until the mesh part has loaded it). */
export function keyPemOf(key: SiteKey | undefined): string | undefined {
  return key?.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}
