// A site's Ed25519 key: its libp2p identity, the signer of its records and of the requests it
// forwards. Loaded from `[mesh] key_file` (written by `switchyard keygen`).

import type { KeyObject } from 'node:crypto';

export interface SiteKey {
  /** The raw 32-byte public key. */
  readonly publicKeyRaw: Uint8Array;
  /** The same, base64url without padding: what `[[mesh.sites]] public_key` pins. */
  readonly publicKey: string;
  /** The private key for node:crypto's sign(null, data, key). Never logged. */
  readonly privateKey: KeyObject;
  /** The libp2p peer id of the same key (base58btc string). */
  readonly peerId: string;
}
