// The key gossipsub drops repeated copies of a message by before it checks the copy's signature
// (its `fastMsgIdFn`). Without one, gossipsub verifies the Ed25519 signature of every copy that
// arrives (building a key object each time) and only then finds it in its seen cache: with each
// record reaching a site once from every mesh peer, that was about four verifications per record,
// the largest single cost of a site in a 12-site mesh (#20 item 8). gossipsub fills this cache only
// with copies whose signature verified, so a forged copy that arrives first is judged (and
// refused) on its own, and never keeps the genuine one out; a copy that differs from a verified
// message in any byte has another key.

import { createHash } from 'node:crypto';

/** The parts of a gossipsub RPC message that make it what it is (RPC.Message). */
export interface RawGossipMessage {
  readonly from?: Uint8Array | undefined;
  readonly data?: Uint8Array | undefined;
  readonly seqno?: Uint8Array | undefined;
  readonly topic: string;
  readonly signature?: Uint8Array | undefined;
  readonly key?: Uint8Array | undefined;
}

const EMPTY = new Uint8Array(0);

/** SHA-256 (base64) over every field, each preceded by its length: equal only for byte-identical messages. */
export function fastMessageId(message: RawGossipMessage): string {
  const hash = createHash('sha256');
  const topic = new TextEncoder().encode(message.topic);
  for (const field of [message.from, message.seqno, topic, message.data, message.signature, message.key]) {
    const bytes = field ?? EMPTY;
    const length = Buffer.allocUnsafe(4);
    length.writeUInt32BE(bytes.byteLength);
    hash.update(length);
    hash.update(bytes);
  }
  return hash.digest('base64');
}
