// A feature of the gateway's control plane (mesh, cluster, tenants, model management, tracing, the
// request log, and every later one): one object with a lifecycle, after Caddy's one-method
// lifecycle interfaces (Provisioner, Validator, CleanerUpper). It lives in its own folder, beside
// the rules it wires; the owner (src/gateway/) holds the list of the features the config enables
// (gateway/features.ts names them, and nothing else does) and composes it: start, stop, reload,
// metrics and figures are loops over that list, and what a feature adds to the owner's other parts
// (the request plane's ports, the admin routes' sources, the scheduler's collaborators) is one
// object, merged. An absent feature contributes nothing.

import type { Registry } from 'prom-client';

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
}

/** One admin read view: its JSON answer now. */
export type AdminView = () => unknown;
