// What the mesh service reports: metrics count it, the transition log writes it, nothing else
// depends on it.

import type { RecordRejection } from './judgement.ts';
import type { PublishKind } from './publisher.ts';

export interface MeshEvents {
  'mesh:record-accepted': { site: string; revision: number; full: boolean; modelsChanged: boolean };
  'mesh:record-rejected': {
    reason: RecordRejection;
    site: string | undefined;
    peer: string;
    detail: string;
    /** Write a log line (and a dashboard transition) for this one: see rejection-log.ts. */
    log: boolean;
    /** Lines of this reason held back since the last one written. */
    suppressed: number;
    /** The message's author is a pinned site or an admitted peer; rejections by others only count. */
    knownAuthor: boolean;
  };
  /** A want from a peer that is neither a pinned site nor admitted: dropped, not relayed. */
  'mesh:want-ignored': { peer: string };
  /** The mesh state file (held revisions) could not be read or written; federation runs on. */
  'mesh:state-failed': { problem: string };
  /** A pinned site turned fresh or stale (once per transition). */
  'mesh:site-freshness': { site: string; fresh: boolean };
  'mesh:published': { kind: PublishKind; why: string; revision: number; bytes: number; models: number };
  /** A full record left models out; `firstInEpisode` marks the one to log. */
  'mesh:models-capped': { total: number; cap: number; firstInEpisode: boolean };
  'mesh:want-sent': { site: string };
  /** This site's own record could not be published (oversized, transport error). */
  'mesh:publish-failed': { kind: PublishKind; error: string };
}
