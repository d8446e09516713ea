// A pinned site's verifying key (node:crypto only): the request path checks forwarded requests with
// it, so it must not pull libp2p in with the site key file (a gateway without [mesh] loads neither).

import { createPublicKey, type KeyObject } from 'node:crypto';
import { parsePublicKey } from '#src/mesh/config/public-key.ts';
import { type MeshSitePin } from '#src/mesh/config/mesh-config.ts';

/** The KeyObject node:crypto verifies with, from a pinned base64url key; throws naming the problem. */
export function pinnedPublicKey(b64url: string): KeyObject {
  const parsed = parsePublicKey(b64url);
  if (!parsed.ok) throw new Error(`pinned public key ${parsed.message}`);
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b64url }, format: 'jwk' });
}

/** The verifying key of every pinned site, by site id (what JudgeContext.pins and forwarded-request checks use). */
export function pinnedKeys(sites: readonly MeshSitePin[]): ReadonlyMap<string, KeyObject> {
  return new Map(sites.map((pin) => [pin.id, pinnedPublicKey(pin.publicKey)]));
}
