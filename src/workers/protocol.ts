// The messages between the lease owner (the main thread: control plane, scheduler, admin) and the
// request workers (threads that each run the HTTP listener and the request path). Plain data only:
// everything crosses a MessagePort by structured clone, so no functions, no class instances. A
// feature's messages are its own (core/cross-thread.ts): they cross as `feature`, under its name,
// and nothing here reads them.

import type { GatewayConfig } from '#src/config/index.ts';
import type { DecodeSample, RatioSample } from '#src/capacity/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import type { PlaneFigures } from '#src/plane/index.ts';
import type { Exclusion, RouteRequest, RouteSummary, RouterRoom } from '#src/routing/index.ts';
import type { LoadOutcome, QueueSettings, RefusalReason } from '#src/scheduler/index.ts';
import type { FeatureMessage } from '#src/core/cross-thread.ts';

/** The fleet as the request path needs it between admissions (no live lease counts: those stay with the owner). */
export interface ViewsUpdate {
  readonly views: readonly NodeView[];
  readonly connectionLimit: number | undefined;
  /** Each limited router's switch state and busy models: router-room judges a failover by them. */
  readonly rooms: readonly RouterRoom[];
}

/**
 * What replaces the view at `index` of the views last pushed (the same node): its new view, or — when
 * only its learned figures moved (each answer may move them) — those figures alone, which the worker
 * puts on the view it holds (the rest of it stays the same objects, and is not cloned again).
 */
export type ChangedView = readonly [index: number, view: NodeView | LearnedChange];

/** A node's learned figures as they are now (absent = none learned), for the view the worker already holds. */
export interface LearnedChange {
  readonly node: string;
  readonly tokenRatios?: NodeView['tokenRatios'];
  readonly decodeRates?: NodeView['decodeRates'];
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
  /** What each feature's worker side starts with, by the feature's name (an absent feature has no entry). */
  readonly features: Readonly<Record<string, FeatureMessage>>;
}

/** One feature's message, carried under its name. */
export interface FeatureEnvelope {
  readonly t: 'feature';
  readonly name: string;
  readonly message: FeatureMessage;
}

export interface RelayTarget {
  readonly url: string;
  /** Proves a request came from one of this gateway's workers (it may then name its client's address). */
  readonly secret: string;
}

export type EventRecord = { [K in keyof ProxyEvents]: readonly [K, ProxyEvents[K]] }[keyof ProxyEvents];

export type OwnerMessage =
  | { readonly t: 'fleet'; readonly fleet: ViewsUpdate }
  /**
   * The same nodes in the same order, some of their views replaced (a learned figure, a health
   * change): only those cross, at their index in the views last pushed, with the rooms as they are now.
   */
  | { readonly t: 'views'; readonly changed: readonly ChangedView[]; readonly rooms: readonly RouterRoom[] }
  /** The answer to `ask-owner` `id`: the node, or undefined when none is remembered. */
  | { readonly t: 'answer-owner'; readonly id: number; readonly node: string | undefined }
  /** Only the limited routers' rooms changed (a lease came back, a switch moved): the views stand. */
  | { readonly t: 'rooms'; readonly rooms: readonly RouterRoom[] }
  /** A reload's config; the worker answers `config-applied` with its generation. */
  | { readonly t: 'config'; readonly config: GatewayConfig; readonly generation: number }
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
  | FeatureEnvelope
  | { readonly t: 'drain' };

/** What a worker reports every second, for /admin/runtime and /metrics: its request plane's figures. */
export type WorkerFigures = PlaneFigures;

export type WorkerMessage =
  | { readonly t: 'listening'; readonly port: number }
  | { readonly t: 'listen-failed'; readonly error: string }
  /** The worker's plane follows the pushed config of this generation: from now on it judges requests by it. */
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
  /** Which node produced the answer `answerId` for `tenant` (the one memory of owners): answered by `answer-owner`. */
  | { readonly t: 'ask-owner'; readonly id: number; readonly tenant: string; readonly answerId: string }
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
  | FeatureEnvelope
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
