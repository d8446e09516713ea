// The key gossipsub drops repeated copies of a message by before it checks the copy's signature
// (its `fastMsgIdFn`). Without one, gossipsub verifies the Ed25519 signature of every copy that
// arrives (building a key object each time) and only then finds it in its seen cache: with each
// record reaching a site once from every mesh peer, that was about four verifications per record
// in a 12-site mesh, the largest single cost of a site (#20 item 8).
//
// The key is what gossipsub's seen cache already uses under StrictSign: the author's peer id and
// its sequence number. So nothing is dropped that the seen cache would have let through; it is
// only dropped sooner. gossipsub fills this cache only with messages whose signature verified,
// so a forged copy that arrives first is judged (and refused) on its own and never keeps the
// genuine one out; one that arrives after the genuine one is dropped, as the seen cache would.

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

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

/**
 * `from` and `seqno` (base64, joined by a character base64 never has); a message without them (not
 * signed: StrictSign refuses it anyway) is keyed by a SHA-256 of all its fields, each preceded by
 * its length.
 */
export function fastMessageId(message: RawGossipMessage): string {
  if (message.from !== undefined && message.seqno !== undefined) return `${b64(message.from)}.${b64(message.seqno)}`;
  const hash = createHash('sha256');
  const topic = new TextEncoder().encode(message.topic);
  for (const field of [message.from, message.seqno, topic, message.data, message.signature, message.key]) {
    const bytes = field ?? new Uint8Array(0);
    const length = Buffer.allocUnsafe(4);
    length.writeUInt32BE(bytes.byteLength);
    hash.update(length);
    hash.update(bytes);
  }
  return `#${hash.digest('base64')}`;
}
