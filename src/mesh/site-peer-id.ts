// A site's libp2p peer id is its Ed25519 key (docs/federation.md): the id a pinned key stands
// for, which the connection gater admits and against which a message's author is checked.

import { publicKeyFromRaw } from '@libp2p/crypto/keys';
import { peerIdFromPublicKey } from '@libp2p/peer-id';

/** The peer id (12D3KooW...) of a pinned base64url raw Ed25519 public key. */
export function sitePeerId(publicKey: string): string {
  return peerIdFromPublicKey(publicKeyFromRaw(Buffer.from(publicKey, 'base64url'))).toString();
}

/** The peer id a `[mesh] peers` multiaddr ends in (config validation ensures it ends in /p2p/<id>). */
export function addressPeerId(addr: string): string | undefined {
  const at = addr.lastIndexOf('/p2p/');
  return at < 0 ? undefined : addr.slice(at + '/p2p/'.length) || undefined;
}
