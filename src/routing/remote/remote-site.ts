// What routing knows of one remote site (federation, issue 12): the part of its last accepted,
// signed record that routing judges, and whether that knowledge is fresh. Plain data, produced by
// the mesh's site store (src/mesh/) and judged by pure functions here, like nodes are.

/** One model a remote site serves, as its record says. */
export interface RemoteModel {
  /** The model's largest context at that site; undefined = not said (never judged too small). */
  readonly ctx: number | undefined;
  /** Served only after a load or a wake at that site (still eligible, ranked after the rest). */
  readonly onDemand: boolean;
}

export interface RemoteSiteView {
  /** The pinned site id (`[[mesh.sites]] id`). */
  readonly id: string;
  /** The site's gateway URL from its record (`[mesh] url` there): where forwarded requests go. */
  readonly url: string | undefined;
  /** A newer accepted revision arrived within `[mesh] freshness` (the receiver's monotonic clock). */
  readonly fresh: boolean;
  /** The models of the last accepted record; empty before any record. */
  readonly models: ReadonlyMap<string, RemoteModel>;
  /** Lower is better; from the record's `load` (queued plus in flight per slot). 0 when unknown. */
  readonly load: number;
  /**
   * Stale, but its last record was accepted within REMEMBERED_MS: its models are unavailable, not
   * unknown (503 + Retry-After, never 404). Set only when true (absent = false).
   */
  readonly remembered?: boolean;
}

/**
 * How long a stale site's models keep a request for them from a 404 (docs/federation-forwarding.md,
 * "A site that is down"): a day, so that a site down for maintenance or a night does not turn its
 * models into "does not exist" — clients do not retry a 404. Counted on the receiver's monotonic
 * clock from the last record it accepted; held in memory (a restarted site has no memory of it).
 */
export const REMEMBERED_MS = 24 * 3600 * 1000;

/**
 * Why a remote site was not chosen. A closed set, like node exclusions: the same codes feed 503
 * bodies, metrics, logs and /admin/explain.
 */
export type SiteExclusionCode =
  /** No accepted record within the freshness window (or none yet): fails closed. */
  | 'stale'
  /** Its record does not list the model. */
  | 'missing'
  /** Its record's context for the model is smaller than the request needs. */
  | 'too_small'
  /** Forwarding to it failed recently (connection refused, timed out, 5xx before the first byte). */
  | 'unreachable'
  /** Tried for this request: it answered, but refused it (its error, named by status and code). */
  | 'refused'
  /** Already tried for this request (failover never returns to it); answers name the real failure instead. */
  | 'already_tried'
  /** The request was itself forwarded by another site: served by local nodes only (one hop). */
  | 'forwarded'
  /** The request's tenant may not be forwarded there (`[[tenants]] sites`; [] = this site only). */
  | 'not_in_tenant_scope';

export interface SiteExclusion {
  readonly site: string;
  readonly code: SiteExclusionCode;
  /** Short human detail, e.g. "record 42 s old" or "ctx 4096 < 9000 needed". */
  readonly detail?: string;
}
