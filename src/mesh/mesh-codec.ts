// What the mesh service needs from the record crypto (src/mesh/record-codec.ts, acceptance.ts,
// revision-clock.ts and site-key-file.ts implement it): kept behind one narrow interface so the
// service is tested with the real one and wired in one place.

import type { KeyObject } from 'node:crypto';
import type { JudgeContext } from './acceptance.ts';
import type { Judgement } from './judgement.ts';
import type { SiteRecord, SiteRecordModel } from './site-record.ts';

/** What a receiver knows when it judges a message (the acceptance function's context). */
export type MeshJudgeContext = JudgeContext;

export interface MeshCodec {
  /** The message data of this site's record, signed with its key. */
  sign(record: SiteRecord): Uint8Array;
  /** The pure acceptance function. */
  judge(data: Uint8Array, ctx: MeshJudgeContext): Judgement;
  /** The digest a heartbeat names instead of the list. */
  digestOf(models: readonly SiteRecordModel[]): string;
  /** A pinned public key (base64url raw Ed25519); throws a clear Error on a bad one. */
  pinnedKey(publicKey: string): KeyObject;
  /** The libp2p peer id of a pinned key (a site's peer id is its key). */
  peerIdOf(publicKey: string): string;
  /** The next revision of this site's record, higher than every earlier one (a hybrid logical clock). */
  nextRevision(wallMs: number): number;
}
