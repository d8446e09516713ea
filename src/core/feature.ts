// A feature of the gateway's control plane (mesh, cluster, tenants, model management, tracing, the
// request log, and every later one): one object with a lifecycle, after Caddy's one-method
// lifecycle interfaces (Provisioner, Validator, CleanerUpper). It lives in its own folder, beside
// the rules it wires; the owner (src/gateway/) holds the list of the features the config enables
// (gateway/features.ts names them, and nothing else does) and composes it: start, stop, reload,
// metrics and figures are loops over that list, and what a feature adds to the owner's other parts
// (the request plane's ports, the admin routes' sources, the scheduler's collaborators) is one
// object, merged. An absent feature contributes nothing.

import type { Registry } from 'prom-client';
import type { FeatureReports } from './request-fields.ts';

/**
 * `Config` is the owner's config (a reload hands over the previous and the next); `Parts` is what
 * this feature adds to the owner's other parts, by the owner's names (gateway/features.ts,
 * `FeatureParts`): an admission wrapper (what [cluster] does to the Scheduler's admission), what it
 * gives the request plane's ports (the mesh's sites link, [cluster]'s tenant admission), the
 * sources of its admin routes (/admin/sites, /admin/tenants, …). Every member is optional there,
 * so a feature gives only its own.
 */
export interface Feature<Config, Parts extends object = object> {
  /** How logs and errors name it ('mesh', 'cluster', …). */
  readonly name: string;
  /** What it adds to the owner's other parts: read once, when the owner composes the list. */
  readonly parts?: Parts;
  /** Begins its background work (after the request plane listens). Throws when it cannot run: the start fails. */
  start(): Promise<void> | void;
  /** Ends its background work and releases what it holds (after the request plane drained). */
  stop(): Promise<void> | void;
  /** A reload's config took effect: apply what applies live (the rest is restart-only, config/restart-only.ts). */
  reload?(previous: Config, next: Config): void;
  /** Every request plane now follows the reloaded config (the workers confirmed it). */
  reloaded?(next: Config): void;
  /** Registers its series on the owner's Prometheus registry (once, when the list is composed). */
  metrics?(registry: Registry): void;
  /** Its figures in /admin/runtime, laid beside the owner's (undefined = none now). */
  runtime?(): Readonly<Record<string, unknown>> | undefined;
  /** Its figures in the detailed /health, laid beside the fleet's (undefined = none now). */
  health?(): Readonly<Record<string, unknown>> | undefined;
  /**
   * Makes an ok fleet "degraded" in /health while it answers true (still served, still 200: the
   * tenants' failing state store); absent = it never does.
   */
  readonly degraded?: (() => boolean) | undefined;
  /**
   * Its read views in the admin table, by path (GET, admin read access, answered as JSON): the
   * tenants' /admin/tenants. A later feature's view of a path replaces an earlier one's ([cluster]'s
   * site-wide report over the tenants' own).
   */
  adminViews?(): Readonly<Record<string, AdminView>>;
  /**
   * Its admin commands, by path (POST, admin change access — the same guard, token and same-origin
   * checks as every admin change —, a JSON body or none, answered as JSON): the batch feature's
   * `/admin/batches/*` (a cancel of any tenant's job). A path ending in `/*` serves every path below
   * it (the action reads the rest from `ask.path`). A later feature's action of a path replaces an
   * earlier one's.
   */
  adminActions?(): Readonly<Record<string, AdminAction>>;
  /**
   * What it says of its own fields of finished requests (src/core/request-fields.ts): its request
   * half sets them on the report under its name; here, its fields in the request log's line and
   * /admin/requests' record, and what its series (registered by `metrics`) count of each request
   * that carries them (`featureReports` types them by its own fields). A request without its
   * fields runs none of it.
   */
  readonly reports?: FeatureReports | undefined;
  /**
   * What it adds to GET /admin/explain for one ask: the endpoint the request would be sent to (the
   * nodes are judged on it: a translation's), and its fields laid after the explanation's own;
   * undefined = nothing.
   */
  explain?(ask: ExplainAsk): ExplainPart | undefined;
}

/** One admin read view: its JSON answer now. */
export type AdminView = () => unknown;

/** What an admin command is asked: the request's path, and its JSON body (undefined = none). */
export interface AdminActionAsk {
  readonly path: string;
  readonly body: unknown;
}

/** One admin command: its answer (200, as JSON); a GatewayError (core/errors.ts) is answered as that error, with its status. */
export type AdminAction = (ask: AdminActionAsk) => unknown;

/** What /admin/explain is asked: the model as routed, and the endpoint named (`endpoint=`; undefined = any). */
export interface ExplainAsk {
  readonly model: string;
  readonly endpoint: string | undefined;
}

/** A feature's part of an explanation. */
export interface ExplainPart {
  /** The endpoint the request would be sent to instead of the one asked (the nodes are judged on it). */
  readonly endpoint?: string | undefined;
  /** Its fields in the answer, after the explanation's own. */
  readonly fields?: Readonly<Record<string, unknown>> | undefined;
}
