// Prometheus metrics. This module only subscribes to events and reads snapshots at scrape time;
// nothing in the data or control plane imports it. Label values come from bounded sets
// (node names, model labels from model-label.ts, status codes, closed result/reason sets).

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { EventBus } from '#src/core/events.ts';
import type { FinishedRequest, RequestFields } from '#src/core/request-fields.ts';
import type { NodeView, RegistryEvents } from '#src/nodes/index.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import { ExclusionCounter, type PrefixHitFigures } from '#src/routing/index.ts';
import { registerPrefixHits } from './prefix-hits.ts';
import { registerRequestMetrics } from './request-metrics.ts';
import { BoundCounter, BoundHistogram } from '#src/core/bound-series.ts';

const HEALTH_STATES = ['unknown', 'healthy', 'degraded', 'dead', 'asleep'] as const;

export interface MetricsSources {
  readonly registryEvents: EventBus<RegistryEvents>;
  readonly proxyEvents: EventBus<ProxyEvents>;
  readonly nodeViews: () => readonly NodeView[];
  /** Requests waiting per model. */
  readonly queueDepths: () => Readonly<Record<string, number>>;
  /** Capacity leases out per (node, model). */
  readonly leases: () => readonly { node: string; model: string; requests: number }[];
  /** The bounded label of a model id (model-label.ts); events carry labels already. */
  readonly modelLabel: (model: string) => string;
  /** Upstream connection figures per node (limit, open sockets, running and waiting requests). */
  readonly upstreamConnections?: () => Readonly<Record<string, UpstreamConnectionFigures>>;
  /** cache-aware's estimated prefix hits so far. */
  readonly prefixHits?: () => PrefixHitFigures;
  /**
   * A finished request that carries features' own fields, to the features that count them
   * (core/request-fields.ts `observeFields`); a request without any calls nothing.
   */
  readonly featureFields?: (request: FinishedRequest, fields: RequestFields) => void;
}

export interface UpstreamConnectionFigures {
  readonly limit: number;
  readonly connected: number;
  readonly running: number;
  readonly pending: number;
  readonly saturated: boolean;
}

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly #unsubscribe: (() => void)[] = [];
  readonly #proxyEvents: EventBus<ProxyEvents>;

  constructor(sources: MetricsSources) {
    const r = this.registry;
    this.#proxyEvents = sources.proxyEvents;
    collectDefaultMetrics({ register: r, prefix: 'gateway_process_' });
    if (sources.prefixHits !== undefined) registerPrefixHits(r, sources.prefixHits);
    const requests = new BoundCounter({
      name: 'gateway_requests_total',
      help: 'Client requests answered, by model, node and HTTP status (499 = client went away).',
      labelNames: ['model', 'node', 'status'],
      registers: [r],
    });
    const byEndpoint = new BoundCounter({
      name: 'gateway_endpoint_requests_total',
      help: 'Client inference requests answered, by endpoint (its path, e.g. /v1/messages) and HTTP status.',
      labelNames: ['endpoint', 'status'],
      registers: [r],
    });
    const duration = new BoundHistogram({
      name: 'gateway_request_duration_seconds',
      help: 'Time from request arrival to the end of the response.',
      labelNames: ['model'],
      buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers: [r],
    });
    const firstByte = new BoundHistogram({
      name: 'gateway_time_to_first_byte_seconds',
      help: 'Time from request arrival to the first response body byte sent to the client.',
      labelNames: ['model'],
      buckets: [0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [r],
    });
    const attempts = new BoundCounter({
      name: 'gateway_upstream_attempts_total',
      help: 'Upstream attempts by node and result (success, http_5xx, connect_error, reset, timeout, load_timeout, stream_error, invalid_body, interim_response, client_abort, context_overflow, model_not_found, endpoint_missing, contradictory_refusal).',
      labelNames: ['node', 'result'],
      registers: [r],
    });
    const exclusions = new Counter({
      name: 'gateway_model_filter_exclusions_total',
      help: 'Nodes excluded while routing a request, by model and reason.',
      labelNames: ['model', 'reason'],
      registers: [r],
    });
    const discoveries = new Counter({
      name: 'gateway_model_discovery_total',
      help: 'Model listing fetches by node and result (ok, empty, error, parse_error, timeout).',
      labelNames: ['node', 'result'],
      registers: [r],
    });
    const limited = new Counter({
      name: 'gateway_discovery_limited_total',
      help: 'Model listings a limit cut, by node and limit (id_too_long, not_allowed, too_many_models); once per poll while it applies.',
      labelNames: ['node', 'limit'],
      registers: [r],
    });
    new Gauge({
      name: 'gateway_nodes',
      help: 'Configured nodes by health state.',
      labelNames: ['state'],
      registers: [r],
      collect() {
        const counts = new Map<string, number>(HEALTH_STATES.map((s) => [s, 0]));
        for (const view of sources.nodeViews()) counts.set(view.health.status, (counts.get(view.health.status) ?? 0) + 1);
        for (const [state, n] of counts) this.set({ state }, n);
      },
    });
    new Gauge({
      name: 'gateway_node_models_ok',
      help: "1 when the node's model listing is known (known or known_empty), else 0.",
      labelNames: ['node'],
      registers: [r],
      collect() {
        this.reset();
        for (const view of sources.nodeViews()) {
          const ok = view.discovery.phase === 'known' || view.discovery.phase === 'known_empty';
          this.set({ node: view.spec.name }, ok ? 1 : 0);
        }
      },
    });

    const contextRejections = new Counter({
      name: 'gateway_context_rejections_total',
      help: 'Requests answered 400 context_length_exceeded by the gateway (no node could fit the prompt).',
      labelNames: ['model'],
      registers: [r],
    });
    const unroutable = new Counter({
      name: 'gateway_unroutable_requests_total',
      help: 'Requests no node could take, by answer: model_not_found (404, no node lists the model) or no_healthy_node (503, retry later).',
      labelNames: ['answer'],
      registers: [r],
    });
    const queueWait = new Histogram({
      name: 'gateway_queue_wait_seconds',
      help: 'Time requests waited in a model queue for a slot or context budget.',
      labelNames: ['model', 'outcome'],
      buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [r],
    });
    new Gauge({
      name: 'gateway_queue_depth',
      help: 'Requests waiting per model for a slot or context budget.',
      labelNames: ['model'],
      registers: [r],
      collect() {
        this.reset();
        // inc, not set: several models may share the `_other` label.
        for (const [model, depth] of Object.entries(sources.queueDepths())) this.inc({ model: sources.modelLabel(model) }, depth);
      },
    });
    new Gauge({
      name: 'gateway_leases_in_flight',
      help: 'Slot and context-budget leases held per node and model.',
      labelNames: ['node', 'model'],
      registers: [r],
      collect() {
        this.reset();
        for (const lease of sources.leases())
          this.inc({ node: lease.node, model: sources.modelLabel(lease.model) }, lease.requests);
      },
    });

    new Gauge({
      name: 'gateway_upstream_connections',
      help: 'Upstream connections per node: state limit (upstream.max_connections), connected (open sockets), running, pending (waiting for a connection).',
      labelNames: ['node', 'state'],
      registers: [r],
      collect() {
        this.reset();
        for (const [node, f] of Object.entries(sources.upstreamConnections?.() ?? {})) {
          for (const state of ['limit', 'connected', 'running', 'pending'] as const) this.set({ node, state }, f[state]);
        }
      },
    });
    new Gauge({
      name: 'gateway_upstream_saturated',
      help: '1 while every connection to the node is in use (further requests queue or wait), else 0.',
      labelNames: ['node'],
      registers: [r],
      collect() {
        this.reset();
        for (const [node, f] of Object.entries(sources.upstreamConnections?.() ?? {})) this.set({ node }, f.saturated ? 1 : 0);
      },
    });

    const contradictions = new Counter({
      name: 'gateway_upstream_contradictions_total',
      help: "Context refusals by a node that its own advertised figures or the prompt's size disprove; each counts toward passive ejection.",
      labelNames: ['node'],
      registers: [r],
    });

    const wakes = new Counter({
      name: 'gateway_wakes_total',
      help: 'Wakes of sleeping nodes by result (sent, in_window, failed, not_wakeable, unknown_node).',
      labelNames: ['node', 'result'],
      registers: [r],
    });

    const switches = new Counter({
      name: 'gateway_model_switches_total',
      help: 'Requests sent that make a llama-server router at max_instances evict a model to load another, by node.',
      labelNames: ['node'],
      registers: [r],
    });

    const excludedBy = new ExclusionCounter();
    this.#unsubscribe.push(
      ...registerRequestMetrics(r, sources.proxyEvents),
      sources.proxyEvents.on('route:model-switch', (e) => switches.inc({ node: e.node })),
      sources.registryEvents.on('node:wake', (e) => wakes.inc({ node: e.node, result: e.result })),
      sources.proxyEvents.on('proxy:context-rejected', (e) => contextRejections.inc({ model: e.model })),
      sources.proxyEvents.on('proxy:unroutable', (e) => unroutable.inc({ answer: e.answer })),
      sources.proxyEvents.on('proxy:queue-wait', (e) =>
        queueWait.observe({ model: e.model, outcome: e.admitted ? 'admitted' : 'refused' }, e.waitedMs / 1000),
      ),
      // Per request only a store in the bus's journal: counted when scraped (text()) or every DEFERRED_CAPACITY requests.
      sources.proxyEvents.deferred('proxy:request-finished', (e) => {
        const status = String(e.status);
        requests.inc(1, e.model, e.node ?? 'none', status);
        byEndpoint.inc(1, e.endpoint, status);
        duration.observe(e.durationMs / 1000, e.model);
        if (e.firstByteMs !== undefined) firstByte.observe(e.firstByteMs / 1000, e.model);
        if (e.fields !== undefined) sources.featureFields?.(e, e.fields);
      }),
      sources.proxyEvents.deferred('proxy:attempt', (e) => {
        attempts.inc(1, e.node, e.result);
        if (e.result === 'contradictory_refusal') contradictions.inc({ node: e.node });
      }),
      sources.proxyEvents.on('route:excluded', (e) => {
        // One increment per reason, not per node: a large fleet excludes hundreds of nodes per request.
        for (const [reason, count] of excludedBy.of(e.excluded)) exclusions.inc({ model: e.model, reason }, count);
      }),
      sources.registryEvents.on('node:discovery', (e) => {
        const result = e.result.ok ? (e.result.models.length > 0 ? 'ok' : 'empty') : e.result.reason;
        discoveries.inc({ node: e.node, result });
        if (e.result.ok) for (const drop of e.result.dropped ?? []) limited.inc({ node: e.node, limit: drop.limit });
      }),
    );
  }

  contentType(): string {
    return this.registry.contentType;
  }

  /** The scrape: the requests' deferred figures are counted first. */
  text(): Promise<string> {
    this.#proxyEvents.flush();
    return this.registry.metrics();
  }

  close(): void {
    for (const off of this.#unsubscribe.splice(0)) off();
  }
}
