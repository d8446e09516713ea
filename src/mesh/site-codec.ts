// The mesh service's record crypto for one site: its key signs, the pure acceptance function
// judges, the revision clock numbers (record-codec.ts, acceptance.ts, revision-clock.ts).

import { judgeMessage } from './acceptance.ts';
import type { MeshCodec } from './mesh-codec.ts';
import { modelsDigest, signRecord } from './record-codec.ts';
import { RevisionClock } from './revision-clock.ts';
import type { SiteKey } from './site-key.ts';
import { pinnedPublicKey } from './site-key-file.ts';
import { sitePeerId } from './site-peer-id.ts';

export function siteCodec(key: SiteKey): MeshCodec {
  const revisions = new RevisionClock();
  return {
    sign: (record) => signRecord(record, key),
    judge: judgeMessage,
    digestOf: modelsDigest,
    pinnedKey: pinnedPublicKey,
    peerIdOf: sitePeerId,
    nextRevision: (wallMs) => revisions.next(wallMs),
  };
}
