// The messages between the lease owner (the main thread: control plane, scheduler, admin) and the
// request workers (threads that each run the HTTP listener and the request path). Plain data only:
// everything crosses a MessagePort by structured clone, so no functions, no class instances.

import type { GatewayConfig } from '#src/config/index.ts';
import type { DecodeSample, RatioSample } from '#src/capacity/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import type { PlaneFigures } from '#src/plane/index.ts';
import type { Exclusion, RouteRequest, RouteSummary, RouterRoom } from '#src/routing/index.ts';
import type { LoadOutcome, QueueSettings, RefusalReason } from '#src/scheduler/index.ts';
import type { ClaimVerdict, ForwardClaim, ReplayOp } from '#src/mesh/forwarding/index.ts';
import type { TenantAsk, TenantDecision, TenantOutcome } from '#src/tenants/index.ts';
import type { SiteWire } from './site-mirror.ts';

/** The fleet as the request path needs it between admissions (no live lease counts: those stay with the owner). */
export interface ViewsUpdate {
  readonly views: readonly NodeView[];
  readonly connectionLimit: number | undefined;
  /** Each limited router's switch state and busy models: router-room judges a failover by them. */
  readonly rooms: readonly RouterRoom[];
}

/** What a worker thread starts with (its workerData). */
export interface WorkerInit {
  readonly index: number;
  readonly count: number;
  readonly config: GatewayConfig;
  readonly fleet: ViewsUpdate;
  /** The port to listen on (0 for the first worker of a port-0 gateway: the kernel picks, the rest follow). */
  readonly port: number;
  /** Where the owner answers the paths this worker relays (admin, /metrics, the dashboard). */
  readonly relay: RelayTarget;
  /** Paths (with their methods) the worker hands to the owner; empty when the owner has its own admin listener. */
  readonly relayed: readonly (readonly [path: string, methods: readonly string[]])[];
  /** What the worker's mesh link starts with ([mesh] only; the key and the sites follow by message). */
  readonly mesh: MeshInit | undefined;
}

/** The owner's mesh state a worker needs to forward and to verify forwarded requests. */
export interface MeshInit {
  /** The site key as PKCS#8 PEM, once the owner's mesh part has loaded it. Never logged. */
  readonly keyPem: string | undefined;
  readonly sites: readonly SiteWire[];
}

export interface RelayTarget {
  readonly url: string;
  /** Proves a request came from one of this gateway's workers (it may then name its client's address). */
  readonly secret: string;
}

export type EventRecord = { [K in keyof ProxyEvents]: readonly [K, ProxyEvents[K]] }[keyof ProxyEvents];

export type OwnerMessage =
  | { readonly t: 'fleet'; readonly fleet: ViewsUpdate }
  /** Only the limited routers' rooms changed (a lease came back, a switch moved): the views stand. */
  | { readonly t: 'rooms'; readonly rooms: readonly RouterRoom[] }
  /** A reload's config; the worker answers `config-applied` with its generation. */
  | { readonly t: 'config'; readonly config: GatewayConfig; readonly generation: number }
  | { readonly t: 'sites'; readonly sites: readonly SiteWire[] }
  | { readonly t: 'site-key'; readonly pem: string }
  | {
      readonly t: 'admitted';
      readonly id: number;
      readonly node: string;
      readonly route: RouteSummary;
      readonly waitedMs: number;
      /** Set when the request loads its model on the node (routing.load_timeout applies). */
      readonly loadTimeoutMs: number | undefined;
    }
  | {
      readonly t: 'refused';
      readonly id: number;
      readonly reason: RefusalReason;
      readonly excluded: readonly Exclusion[];
      readonly waitedMs: number;
    }
  /** The owner's ledger judged a worker's `tenant-admit` (asked with `answer`). */
  | { readonly t: 'tenant-decided'; readonly id: number; readonly decision: TenantDecision }
  /** The owner's answer to a worker's `claim` (replay-claims.ts). */
  | { readonly t: 'claimed'; readonly id: number; readonly verdict: ClaimVerdict }
  | { readonly t: 'drain' };

/** What a worker reports every second, for /admin/runtime and /metrics: its request plane's figures. */
export type WorkerFigures = PlaneFigures;

export type WorkerMessage =
  | { readonly t: 'listening'; readonly port: number }
  | { readonly t: 'listen-failed'; readonly error: string }
  /** The worker's plane follows the pushed config of this generation: from now on it judges tenants by it. */
  | { readonly t: 'config-applied'; readonly generation: number }
  | {
      readonly t: 'admit';
      readonly id: number;
      readonly req: RouteRequest;
      readonly settings: QueueSettings;
      readonly firstAttempt: boolean;
    }
  | { readonly t: 'abort'; readonly id: number }
  | { readonly t: 'release'; readonly id: number }
  | { readonly t: 'settle'; readonly id: number; readonly outcome: LoadOutcome }
  /**
   * A request to judge by its tenant's limits (tenant-desk.ts). `answer` false: the tenant has no
   * limits, the worker goes on without waiting; the owner only counts it (admitted whatever).
   */
  | { readonly t: 'tenant-admit'; readonly id: number; readonly ask: TenantAsk; readonly answer: boolean }
  /** An admitted request ended: its reservation is settled from what it used. */
  | { readonly t: 'tenant-settle'; readonly id: number; readonly outcome: TenantOutcome }
  | { readonly t: 'events'; readonly events: readonly EventRecord[] }
  | { readonly t: 'learn'; readonly node: string; readonly url: string; readonly model: string; readonly nCtx: number }
  | {
      readonly t: 'learn-ratio';
      readonly node: string;
      readonly url: string;
      readonly model: string;
      readonly sample: RatioSample;
    }
  | {
      readonly t: 'learn-decode';
      readonly node: string;
      readonly url: string;
      readonly model: string;
      readonly sample: DecodeSample;
    }
  | { readonly t: 'vanished'; readonly node: string }
  /** A node produced a Responses answer: routing remembers it for `previous_response_id`. */
  | { readonly t: 'learn-answer'; readonly tenant: string; readonly answerId: string; readonly node: string }
  | {
      readonly t: 'learn-endpoint';
      readonly node: string;
      readonly url: string;
      readonly endpoint: string;
      readonly said: string;
    }
  | {
      readonly t: 'log';
      readonly level: 'warn' | 'error';
      readonly fields: Readonly<Record<string, unknown>>;
      readonly message: string;
    }
  | { readonly t: 'figures'; readonly figures: WorkerFigures }
  /**
   * A forwarded request's signature, asked of the gateway's one memory: `hold` at its head (a
   * replay, a copy in flight, a full share?), `use` once admitted, `release` when refused before.
   */
  | { readonly t: 'claim'; readonly id: number; readonly claim: ForwardClaim; readonly op: ReplayOp }
  | { readonly t: 'drained' };

/** The waiting limits of a request's settings, as the owner's scheduler reads them. */
export function queueSettingsOf(settings: QueueSettings): QueueSettings {
  const { queueTimeoutMs, maxQueue, missWaitMs, swapAfterMs, loadTimeoutMs, queueAgingMs } = settings;
  return {
    queueTimeoutMs,
    maxQueue,
    missWaitMs,
    swapAfterMs,
    loadTimeoutMs,
    ...(queueAgingMs === undefined ? {} : { queueAgingMs }),
  };
}
