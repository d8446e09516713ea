// The signed site record on the wire (docs/federation.md is the normative description; keep both
// in step). A site is the single writer of its own record; receivers keep the highest revision.

/** One model in a record. */
export interface SiteRecordModel {
  readonly id: string;
  /** The model's largest context at the site, when known. */
  readonly ctx?: number;
  /** True when the model is served only after a load (llama-server router) or a wake. */
  readonly on_demand?: boolean;
}

/** The site's load as its record says; `score` is what remote routing ranks by (lower is better). */
export interface SiteRecordLoad {
  readonly in_flight: number;
  readonly queued: number;
  /** Slots over every healthy node (0 when unknown). */
  readonly slots: number;
  readonly [extra: string]: unknown;
}

export interface SiteRecord {
  readonly v: 1;
  readonly site: string;
  /** The site's gateway URL (its `[mesh] url`): where forwarded requests go. */
  readonly url: string;
  /** A JSON integer, higher on every publication, heartbeats included, across restarts. */
  readonly revision: number;
  /** Integer ms since the epoch (the publisher's wall clock). */
  readonly issued_at: number;
  /**
   * The full model list. A heartbeat may carry `models_digest` instead (the base64url SHA-256 of
   * the RFC 8785 canonical JSON of the models array), when the list is unchanged.
   */
  readonly models?: readonly SiteRecordModel[];
  readonly models_digest?: string;
  readonly load: SiteRecordLoad;
  readonly [extra: string]: unknown;
}

/** Message data on the gossipsub topic: UTF-8 JSON of this. */
export interface SignedRecord {
  readonly record: SiteRecord;
  /** base64url (no padding) Ed25519 signature over the RFC 8785 canonical JSON of `record`. */
  readonly sig: string;
}

/** The gossipsub topic every site publishes and subscribes to. */
export const SITES_TOPIC = 'switchyard/sites/1';
