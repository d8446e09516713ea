// Pure: GET /admin/hosts — per node what it serves, what is loaded, what it could load on demand,
// the per-model context figures, and the leases and queue depths right now. Plain copies only.

import {
  ctxFor,
  guaranteedCtx,
  kvModeFor,
  residencyOf,
  sharesKvPool,
  slotsFor,
  tokensPerSecond,
  usableDecode,
  usableRatio,
  type DecodeRate,
  type TokenRatio,
  type Usage,
} from '#src/capacity/index.ts';
import { isWaking, modelStateNote, type LoadReading, type ModelEventStreamState, type NodeView } from '#src/nodes/index.ts';
import { nodeEndpoints } from '#src/routing/index.ts';
import type { NodeSourceRow } from '#src/core/node-source-row.ts';
import type { QueueHolder } from '#src/scheduler/index.ts';

export interface HostModelFigures {
  readonly n_ctx: number;
  readonly slots: number | null;
  readonly guaranteed_ctx: number;
  /** llama.cpp: how the model's slots share KV cache, and where the gateway learned it. */
  readonly kv?: { readonly mode: string; readonly source: string };
}

/** Bytes per prompt token the node's answers showed for a model (docs/config.md, "Prompt size"). */
export interface HostTokenRatio {
  readonly low: number;
  readonly high: number;
  readonly samples: number;
  /** Whether requests' prompt bounds use it now (enough answers, recent enough). */
  readonly in_use: boolean;
  readonly age_ms: number;
}

/** How fast the node's answers showed it generates a model's tokens (docs/tenants.md, "What is charged"). */
export interface HostDecodeRate {
  readonly tokens_per_second: number;
  /** From sending a request to its first token (streams); null = not measured yet. */
  readonly first_token_ms: number | null;
  readonly samples: number;
  /** Whether a client that leaves is charged by it now (enough answers, recent enough). */
  readonly in_use: boolean;
  readonly age_ms: number;
}

export interface HostView {
  readonly name: string;
  /** Where the node came from: `static` (the [[nodes]] list) or its [[node_sources]] name (absent from older gateways). */
  readonly source?: string;
  readonly url: string;
  readonly kind: string;
  readonly kv: string;
  readonly role: string;
  /** A llama-server router's own limits from its plain /props (`max_instances` 0 = unlimited); null elsewhere. */
  readonly router: { readonly max_instances: number | null; readonly models_autoload: boolean | null } | null;
  /**
   * A llama-server router: who holds the requests that wait for a model switch on it — the `router`'s own
   * queue or the `gateway`'s — and why (scheduler/queue-holder.ts, docs/protocols.md §7.z5); absent elsewhere.
   */
  readonly switch_queue?: { readonly holder: QueueHolder['holder']; readonly reason: string };
  readonly health: { readonly status: string; readonly fails: number; readonly last_error: string | null };
  /** Nodes that sleep: waking now, and when the last wake went out (ISO time). */
  readonly wake: { readonly method: string; readonly waking: boolean; readonly last_sent_at: string | null } | null;
  readonly discovery: { readonly state: string; readonly fails: number; readonly last_error: string | null };
  readonly loaded: readonly string[];
  readonly available_on_demand: readonly HostOnDemand[];
  /**
   * A router's model event stream (its pushed model state, docs/protocols.md "Pushed model state"):
   * open now, frames read, and the last stop with its reason; absent = the node opens none.
   */
  readonly model_events?: {
    readonly open: boolean;
    readonly frames: number;
    readonly last_stop: { readonly reason: string; readonly detail: string; readonly retry_in_ms: number | null } | null;
  };
  readonly models: Readonly<Record<string, HostModelFigures>>;
  readonly in_flight: number;
  readonly leases: Readonly<Record<string, Usage>>;
  /** Per model: bytes per prompt token learned from this node's answers (absent from older gateways). */
  readonly bytes_per_token?: Readonly<Record<string, HostTokenRatio>>;
  /** Per model: the generation speed learned from this node's answers; absent = none learned. */
  readonly decode_rate?: Readonly<Record<string, HostDecodeRate>>;
  /** The node's own load figures as last scraped (or why not), with their age; null = none read. */
  readonly load: HostLoad | null;
  /** The endpoints it serves (its kind's set or `[[nodes]] endpoints`), and those it answered with a route-level 404, with what it said. */
  readonly endpoints?: { readonly serves: readonly string[]; readonly lacking: Readonly<Record<string, string>> };
  /**
   * What the node says of itself (docs/protocols-endpoints.md, "Knowing an endpoint before asking"): the version it
   * states, and for `kind = "auto"` the kind its answers showed, with the evidence; null = nothing known yet.
   */
  readonly server?: {
    readonly version: string | null;
    readonly detected_kind: string | null;
    readonly evidence: string | null;
  } | null;
}

export type HostLoad =
  | { readonly running: number; readonly waiting: number; readonly kv_usage: number | null; readonly age_ms: number }
  | { readonly error: string; readonly age_ms: number };

/** The GET /admin/hosts document, as hostsView builds it. */
export interface HostsReport {
  readonly hosts: readonly HostView[];
  readonly queue_depth: Readonly<Record<string, number>>;
  /** Where the nodes come from, each source's state and its failure's reason; absent from older gateways. */
  readonly node_sources?: readonly NodeSourceRow[];
}

/** A listed model not loaded now: its router status, and for the statuses that say more, what. */
export interface HostOnDemand {
  readonly id: string;
  readonly status: string;
  /** `failed`: the exit code its child died with. */
  readonly exit_code?: number;
  /** A load's or download's progress as the router's frames told it (0..1, stage, bytes). */
  readonly progress?: {
    readonly fraction: number | null;
    readonly stage: string | null;
    readonly done_bytes: number | null;
    readonly total_bytes: number | null;
  };
  /** Why routing holds it back although listed (failed, downloading); absent = routable (as a load). */
  readonly held?: string;
  /** The status is not one the gateway knows: kept (routed as on demand) and shown, not a listing error. */
  readonly unknown_status?: true;
}

export type { NodeSourceRow };

export interface HostsInput {
  readonly views: readonly NodeView[];
  /** The node sources (the [[nodes]] list and each [[node_sources]] entry); absent = not shown. */
  readonly nodeSources?: () => readonly NodeSourceRow[];
  readonly inFlight: (node: string) => number;
  readonly usage: (node: string, model: string) => Usage;
  readonly load?: (node: string) => LoadReading | undefined;
  readonly queueDepths: Readonly<Record<string, number>>;
  /** Who holds each router node's switch queue, and why: the scheduler's decision (absent: not shown). */
  readonly switchQueues?: ReadonlyMap<string, QueueHolder>;
  /** Each router node's model event stream, by node. */
  readonly modelEvents?: ReadonlyMap<string, ModelEventStreamState>;
  /** Epoch ms the views' deadlines (a wake's window) are judged at. */
  readonly now: number;
}

function hostLoad(reading: LoadReading | undefined, now: number): HostLoad | null {
  if (reading === undefined) return null;
  const age_ms = Math.max(0, now - reading.atMs);
  if (!reading.ok) return { error: reading.error, age_ms };
  const { running, waiting, kvUsage } = reading.figures;
  return { running, waiting, kv_usage: kvUsage ?? null, age_ms };
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

function hostRatios(ratios: Readonly<Record<string, TokenRatio>> | undefined, now: number): Record<string, HostTokenRatio> {
  const out: Record<string, HostTokenRatio> = {};
  for (const [model, r] of Object.entries(ratios ?? {})) {
    out[model] = {
      low: round2(r.low),
      high: round2(r.high),
      samples: r.samples,
      in_use: usableRatio(r, now) !== undefined,
      age_ms: Math.max(0, now - r.atMs),
    };
  }
  return out;
}

function hostDecodes(rates: Readonly<Record<string, DecodeRate>>, now: number): Record<string, HostDecodeRate> {
  const out: Record<string, HostDecodeRate> = {};
  for (const [model, r] of Object.entries(rates)) {
    out[model] = {
      tokens_per_second: round2(tokensPerSecond(r)),
      first_token_ms: r.firstTokenMs === undefined ? null : Math.round(r.firstTokenMs),
      samples: r.samples,
      in_use: usableDecode(r, now) !== undefined,
      age_ms: Math.max(0, now - r.atMs),
    };
  }
  return out;
}

export function hostsView(input: HostsInput): HostsReport & { hosts: HostView[]; queue_depth: Record<string, number> } {
  const hosts = input.views.map((view): HostView => {
    const loaded: string[] = [];
    const onDemand: HostOnDemand[] = [];
    const models: Record<string, HostModelFigures> = {};
    const leases: Record<string, Usage> = {};
    for (const model of view.discovery.models) {
      const residency = residencyOf(view, model.id);
      if (residency.state === 'loaded') {
        loaded.push(model.id);
        const nCtx = ctxFor(view, model.id);
        if (nCtx > 0) {
          const figures = { n_ctx: nCtx, slots: slotsFor(view, model.id) ?? null, guaranteed_ctx: guaranteedCtx(view, model.id) };
          models[model.id] = sharesKvPool(view) ? { ...figures, kv: kvModeFor(view, model.id) } : figures;
        }
      } else if (residency.state === 'on_demand') {
        onDemand.push(onDemandRow(model, residency.status));
      }
      const usage = input.usage(view.spec.name, model.id);
      if (usage.requests > 0) leases[model.id] = { requests: usage.requests, tokens: usage.tokens };
    }
    return {
      name: view.spec.name,
      source: view.spec.source ?? 'static',
      url: view.spec.url,
      kind: view.spec.kind,
      kv: view.spec.kv,
      role: view.capacity.role,
      router:
        view.capacity.router === undefined
          ? null
          : { max_instances: view.capacity.router.maxInstances ?? null, models_autoload: view.capacity.router.autoload ?? null },
      ...switchQueueRow(input.switchQueues?.get(view.spec.name)),
      health: { status: view.health.status, fails: view.health.fails, last_error: view.health.lastError ?? null },
      wake:
        view.spec.wake === undefined
          ? null
          : {
              method: view.spec.wake.kind,
              waking: isWaking(view, input.now),
              last_sent_at: view.wake.lastSentAt === undefined ? null : new Date(view.wake.lastSentAt).toISOString(),
            },
      discovery: { state: view.discovery.phase, fails: view.discovery.fails, last_error: view.discovery.lastError ?? null },
      loaded,
      available_on_demand: onDemand,
      ...modelEventsRow(input.modelEvents?.get(view.spec.name)),
      models,
      in_flight: input.inFlight(view.spec.name),
      leases,
      bytes_per_token: hostRatios(view.tokenRatios, input.now),
      ...(view.decodeRates === undefined ? {} : { decode_rate: hostDecodes(view.decodeRates, input.now) }),
      load: hostLoad(input.load?.(view.spec.name), input.now),
      endpoints: nodeEndpoints(view),
      server: hostServer(view.capacity.server),
    };
  });
  const sources = input.nodeSources?.();
  return { hosts, queue_depth: { ...input.queueDepths }, ...(sources === undefined ? {} : { node_sources: sources }) };
}

function onDemandRow(model: NodeView['discovery']['models'][number], status: string): HostOnDemand {
  const note = modelStateNote(model);
  const { progress } = model;
  return {
    id: model.id,
    status,
    ...(model.exitCode === undefined ? {} : { exit_code: model.exitCode }),
    ...(progress === undefined
      ? {}
      : {
          progress: {
            fraction: progress.fraction ?? null,
            stage: progress.stage ?? null,
            done_bytes: progress.doneBytes ?? null,
            total_bytes: progress.totalBytes ?? null,
          },
        }),
    ...(note?.hold === undefined ? {} : { held: note.hold }),
    ...(note?.unknown === true ? { unknown_status: true as const } : {}),
  };
}

function switchQueueRow(decided: QueueHolder | undefined): Pick<HostView, 'switch_queue'> {
  return decided === undefined ? {} : { switch_queue: { holder: decided.holder, reason: decided.reason } };
}

function modelEventsRow(state: ModelEventStreamState | undefined): Pick<HostView, 'model_events'> {
  if (state === undefined) return {};
  const stop = state.lastStop;
  return {
    model_events: {
      open: state.open,
      frames: state.frames,
      last_stop: stop === undefined ? null : { reason: stop.reason, detail: stop.detail, retry_in_ms: stop.retryInMs ?? null },
    },
  };
}

function hostServer(facts: NodeView['capacity']['server']): HostView['server'] {
  if (facts === undefined) return null;
  return { version: facts.version ?? null, detected_kind: facts.detected ?? null, evidence: facts.evidence ?? null };
}
