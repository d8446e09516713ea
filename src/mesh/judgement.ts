// What a receiver decides about one gossip message (pure; see record acceptance). A rejection
// never alters what is known; it is counted by reason, and logged at a bounded rate (rejection-log.ts).

import type { SiteRecord } from './site-record.ts';

export const RECORD_REJECTIONS = [
  /** Not UTF-8 JSON of {record, sig}, or a field of the wrong type. */
  'malformed',
  /** Larger than `[mesh] max_message_bytes`. */
  'oversized',
  /** `record.site` is not in `[[mesh.sites]]`. */
  'not_pinned',
  /** The signature does not verify against the key pinned for `record.site` (e.g. a peer speaking for another site). */
  'bad_signature',
  /** The record's `url` differs from the one pinned for its site (`[[mesh.sites]] url`). */
  'url_mismatch',
  /** `revision` is not higher than the highest accepted for that site. */
  'replay',
  /** `issued_at` is further in the future than `[mesh] max_clock_skew`. */
  'future',
  /** `issued_at` is older than `[mesh] freshness` + `max_clock_skew` by the receiver's wall clock (a captured record replayed). */
  'stale_record',
  /** More models than `[mesh] max_models_per_site`. */
  'over_cap',
  /** A heartbeat whose models_digest matches no model list the receiver holds for that site. */
  'unknown_digest',
] as const;
export type RecordRejection = (typeof RECORD_REJECTIONS)[number];

export type Judgement =
  | { readonly kind: 'accepted'; readonly record: SiteRecord }
  | {
      readonly kind: 'rejected';
      readonly reason: RecordRejection;
      /** The site the message claimed to be from, when it could be read. */
      readonly site: string | undefined;
      readonly detail: string;
    };
