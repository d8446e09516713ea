// The KeyObject of a pinned site's public key (`[[mesh.sites]] public_key`: raw 32-byte Ed25519,
// base64url without padding). mesh-trust's `pinnedPublicKey` (src/mesh/site-key-file.ts) is the
// shared decoder; this local one stands in until it is merged, with the same contract.

import { createPublicKey, type KeyObject } from 'node:crypto';
import type { MeshSitePin } from '#src/mesh/config/mesh-config.ts';

export function decodePinnedKey(b64url: string): KeyObject {
  if (!/^[A-Za-z0-9_-]{43}$/.test(b64url))
    throw new Error(`public key '${b64url}' is not 32 bytes of base64url (43 characters, no padding)`);
  return createPublicKey({ format: 'jwk', key: { kty: 'OKP', crv: 'Ed25519', x: b64url } });
}

/** The pins of `[[mesh.sites]]` by site id. */
export function pinsOf(
  sites: readonly MeshSitePin[],
  decode: (b64url: string) => KeyObject = decodePinnedKey,
): Map<string, KeyObject> {
  return new Map(sites.map((s) => [s.id, decode(s.publicKey)]));
}
