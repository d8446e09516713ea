// What the admin table needs, in one flat object the composition root fills: read views of the
// registry and the config, the routing filters (so explain runs what the request path runs), and
// the few commands it may give.

import type { Clock } from '#src/core/clock.ts';
import type { ConfigProblem, GatewayConfig } from '#src/config/types.ts';
import type { ModelAction, ModelActionOutcome, ModelEventStreamState, NodeRegistry, WakeResult } from '#src/nodes/index.ts';
import type { Handler, ModelCatalog } from '#src/proxy/index.ts';
import type { Filter } from '#src/routing/index.ts';
import type { AdminRouteKind } from './admin-access.ts';
import type { ModelQueueReport, QueueHolder } from '#src/scheduler/index.ts';
import type { LiveFeed } from './dashboard/live-feed.ts';
import type { RecentRequests } from './dashboard/feed-panels.ts';

export type { RecentRequests, RecentRequestsAnswer } from './dashboard/feed-panels.ts';
import type { ExplainPolicies, ExplainRemote } from './explain.ts';
import type { AdminAction, AdminView, ExplainAsk, ExplainPart } from '#src/core/feature.ts';
import type { NodeSourceRow } from './hosts-view.ts';

export interface AdminCommands {
  readonly reload: () => Promise<{ ok: true } | { ok: false; problems: readonly ConfigProblem[] }>;
  /** Sends a wake to a node unless one is in flight or its wake window is open ('in_window'). */
  readonly wake: (node: string) => Promise<WakeResult>;
  /** Process and upstream-connection figures for /admin/runtime. */
  readonly runtime: () => Record<string, unknown>;
}

/** Model loads and unloads (/admin/models*): the manager's action and the models view. */
export interface ModelCommands {
  /** `evictWarm`: the action stands even where the reconciler would undo it for a warm model (held for [models] operator_hold). */
  act(
    action: ModelAction,
    model: string,
    node: string | undefined,
    options?: { readonly evictWarm?: boolean },
  ): Promise<ModelActionOutcome>;
  view(): unknown;
}

/** The Prometheus exposition /metrics serves. */
export interface MetricsText {
  text(): Promise<string>;
  contentType(): string;
}

export interface AdminDeps {
  readonly clock: Clock;
  /** The current config (admin token, routing settings), read on each request. */
  readonly config: () => GatewayConfig;
  readonly registry: Pick<NodeRegistry, 'snapshot' | 'freshViews' | 'view'>;
  readonly metrics: MetricsText;
  /** Declared aliases and groups, as the request path resolves them. */
  readonly catalog: () => ModelCatalog;
  /** The request path's routing filters. */
  readonly filters: readonly Filter[];
  /** The live selection policies, asked what they would choose without recording it. */
  readonly policies: ExplainPolicies;
  /** Requests waiting per model. */
  readonly queueDepths: () => Record<string, number>;
  /** Each model's queue by priority class and tenant (/admin/explain shows the explained model's). */
  readonly queues?: () => Readonly<Record<string, ModelQueueReport>>;
  readonly commands: AdminCommands;
  /** The dashboard's live stream (GET /admin/events). */
  readonly liveFeed: Pick<LiveFeed, 'open' | 'attachPanels'>;
  /** The last finished requests (GET /admin/requests, src/logs/request-ring.ts); absent = an empty list. */
  readonly requests?: RecentRequests;
  /** [mesh] only: the remote sites, so /admin/explain lists them next to the nodes. */
  readonly remote?: ExplainRemote | undefined;
  /** The features' parts of an explanation (core/feature.ts `explain`: a translation's endpoint and field), in the list's order; absent = none. */
  readonly explain?: (ask: ExplainAsk) => readonly ExplainPart[];
  /** The features' read views by path (GET, read access, JSON: the tenants' /admin/tenants); absent = none. */
  readonly views?: Readonly<Record<string, AdminView>>;
  /** The features' admin commands by path (POST, change access, JSON: the batch feature's /admin/batches/* cancel); absent = none. */
  readonly actions?: Readonly<Record<string, AdminAction>>;
  /** /admin/models*: absent = not offered. */
  readonly models?: ModelCommands;
  /** Who holds each llama-server router node's switch queue (the router or the gateway) and why: the scheduler's decision; absent = not shown. */
  readonly switchQueues?: () => ReadonlyMap<string, QueueHolder>;
  /** Each router node's model event stream (its pushed model state): open, frames read, last stop; absent = none. */
  readonly modelEvents?: () => ReadonlyMap<string, ModelEventStreamState>;
  /** The features' figures laid beside the fleet's in the detailed /health (e.g. [cluster]'s `cluster`); absent = none. */
  readonly healthDetails?: () => Readonly<Record<string, unknown>>;
  /** Whether a feature makes an ok fleet degraded in /health now (a failing state store); absent = never. */
  readonly degraded?: () => boolean;
  /** Where the nodes come from, each source's state (GET /admin/hosts `node_sources`); absent = not shown. */
  readonly nodeSources?: () => readonly NodeSourceRow[];
}

/** Wraps a handler in the admin access check (admin-access.ts), for a route of that kind. */
export type Guard = (route: AdminRouteKind, handler: Handler) => Handler;
