// Pure: what a receiver decides about one gossip message (docs/federation.md, "Acceptance").
// The checks run in this order, and the first that fails decides:
//   oversized → malformed → not_pinned → bad_signature → url_mismatch → future → stale_record → replay → unknown_digest → over_cap
// Size comes before parsing so a large message costs nothing; nothing about a record's content is
// looked at (its revision, time or models) before its signature verifies, so a forged message can
// neither change what is known nor learn anything from which reason it gets beyond "not signed by
// the pinned key". The caller applies only `accepted` judgements; a rejection changes nothing.
// A want message ({"want": site}) is not a record: callers try decodeWant first; judged here it is malformed.

import { verify, type KeyObject } from 'node:crypto';
import type { Judgement, RecordRejection } from './judgement.ts';
import { decodeRecord } from './record-codec.ts';
import type { SiteRecordModel } from './site-record.ts';

export interface JudgeContext {
  /** The key pinned for each trusted site (`[[mesh.sites]]`). */
  readonly pins: ReadonlyMap<string, KeyObject>;
  /** The gateway URL pinned for a site (`[[mesh.sites]] url`), for the sites that pin one. */
  readonly pinnedUrls?: ReadonlyMap<string, string>;
  /** The highest revision accepted so far from `site`, if any. */
  highestRevision(site: string): number | undefined;
  /** The model list held for `site` whose modelsDigest is `digest`, if any (for digest heartbeats). */
  knownModels(site: string, digest: string): readonly SiteRecordModel[] | undefined;
  /** The receiver's wall clock (ms since the epoch), for the issued_at skew check. */
  readonly nowWallMs: number;
  readonly maxClockSkewMs: number;
  /** `[mesh] freshness`: with the skew, how old an issued_at may be (a captured record replayed later is not). */
  readonly freshnessMs: number;
  readonly maxModels: number;
  readonly maxBytes: number;
}

export function judgeMessage(data: Uint8Array, ctx: JudgeContext): Judgement {
  const decoded = decodeRecord(data, ctx.maxBytes);
  if (!decoded.ok) return reject(decoded.reason, decoded.site, decoded.detail);
  const { record, signedBytes, sig } = decoded;
  const site = record.site;
  const key = ctx.pins.get(site);
  if (key === undefined) return reject('not_pinned', site, 'no key is pinned for this site in [[mesh.sites]]');
  if (!verifies(signedBytes, key, sig))
    return reject('bad_signature', site, 'the signature does not verify against the key pinned for this site');
  const pinnedUrl = ctx.pinnedUrls?.get(site);
  if (pinnedUrl !== undefined && record.url !== pinnedUrl)
    return reject('url_mismatch', site, `url ${record.url} differs from the url pinned for this site (${pinnedUrl})`);
  const aheadMs = record.issued_at - ctx.nowWallMs;
  if (aheadMs > ctx.maxClockSkewMs)
    return reject(
      'future',
      site,
      `issued_at is ${aheadMs} ms ahead of this clock, over max_clock_skew (${ctx.maxClockSkewMs} ms)`,
    );
  const ageMs = ctx.nowWallMs - record.issued_at;
  if (ageMs > ctx.freshnessMs + ctx.maxClockSkewMs)
    return reject(
      'stale_record',
      site,
      `issued_at is ${ageMs} ms old, over freshness + max_clock_skew (${ctx.freshnessMs + ctx.maxClockSkewMs} ms)`,
    );
  const highest = ctx.highestRevision(site);
  if (highest !== undefined && record.revision <= highest)
    return reject('replay', site, `revision ${record.revision} is not above ${highest}, the highest accepted`);
  let models = record.models;
  if (models === undefined && record.models_digest !== undefined) {
    models = ctx.knownModels(site, record.models_digest);
    if (models === undefined)
      return reject('unknown_digest', site, 'a heartbeat whose models_digest matches no model list held for this site');
  }
  const count = models?.length ?? 0;
  if (count > ctx.maxModels) return reject('over_cap', site, `${count} models, over max_models_per_site (${ctx.maxModels})`);
  return { kind: 'accepted', record: models === record.models ? record : { ...record, models } };
}

function verifies(data: Uint8Array, key: KeyObject, sig: Uint8Array): boolean {
  try {
    return verify(null, data, key, sig);
  } catch {
    // A pinned key of the wrong type would throw; that is a failed verification, not a crash.
    return false;
  }
}

function reject(reason: RecordRejection, site: string | undefined, detail: string): Judgement {
  return { kind: 'rejected', reason, site, detail };
}
