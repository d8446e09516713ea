// The one place that names the request plane's optional features: which of them a plane gets is
// decided here, from the config, for the main thread and every request worker alike. A feature the
// config does not enable is not built, and contributes nothing to any request
// (proxy/feature/request-feature.ts). Later features wrap earlier ones' routes.

import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { RequestTracer } from '#src/core/tracing.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import type { RequestPorts } from '#src/ports/index.ts';
import {
  NO_HOOKS,
  sitesFeature,
  TenantCallers,
  translateFeature,
  tenantsFeature,
  type ProxyEvents,
  type RemoteDeps,
  type RequestFeature,
  type RequestHooks,
  type StartedRequest,
} from '#src/proxy/index.ts';
import { loadTracer, type TracerHost } from '#src/tracing/index.ts';
import { TRANSLATIONS } from '#src/translate/translations.ts';
import { tracingFeature } from '#src/tracing/request-span.ts';

export interface FeatureHost {
  /** The config in force (a reload's, once applied). */
  readonly config: () => GatewayConfig;
  readonly clock: Clock;
  readonly events: EventBus<ProxyEvents>;
  /** [tracing]: this host's tracer. */
  readonly tracer: RequestTracer | undefined;
  /** [mesh]: this host's forwarding to the remote sites (its pools, its unreachable-site back-off). */
  readonly remote: RemoteDeps | undefined;
}

/** The request features `config` enables: client keys and tenants, federation, tracing, translation. */
export function requestFeaturesFor(config: GatewayConfig, ports: RequestPorts, host: FeatureHost): readonly RequestFeature[] {
  const features: RequestFeature[] = [];
  const callers = new TenantCallers({ admission: ports.tenants, events: host.events });
  // [[tenants]], or [server] api_keys as the `default` tenant: every keyed route asks for a key.
  if (config.tenants.length > 0) features.push(tenantsFeature(() => host.config().tenants, callers));
  const remote = host.remote;
  if (remote !== undefined)
    features.push(
      sitesFeature({
        remote,
        clock: host.clock,
        events: host.events,
        tenancy: () => ({ pins: host.config().mesh?.sites ?? [], tenants: host.config().tenants }),
        tenantCaller: (spec) => callers.ofSpec(spec),
      }),
    );
  if (host.tracer !== undefined) features.push(tracingFeature(host.tracer));
  // [routing] translate (on by default): Anthropic Messages served over Chat Completions where no node speaks it.
  if (config.routing.translate) features.push(translateFeature({ fleet: ports.fleet, clock: host.clock }, TRANSLATIONS));
  return features;
}

/**
 * [tracing]: the tracer a request worker's plane loads for itself (its own provider, batch queue and
 * exporter: a span never crosses to the owner); undefined = off. The main thread's comes with the
 * tracing feature (gateway/features.ts).
 */
export function hostTracer(config: GatewayConfig, host: TracerHost): Promise<RequestTracer | undefined> {
  return loadTracer(config.tracing, host);
}

/** Which features a config enables, to tell whether a reload changes the list (a reload may add or drop client keys, or translation). */
export function featureSetOf(config: GatewayConfig): string {
  return `${config.tenants.length > 0 ? 'tenants' : ''}${config.routing.translate ? '+translate' : ''}`;
}

/** The features' per-request hooks, composed once: none = NO_HOOKS (the handler calls nothing). */
export function requestHooksOf(features: readonly RequestFeature[]): RequestHooks {
  const started = features.flatMap((f) => (f.started === undefined ? [] : [f.started]));
  const sources = features.flatMap((f) => (f.targets === undefined ? [] : [f.targets]));
  const translating = features.flatMap((f) => (f.translations === undefined ? [] : [f.translations]));
  if (started.length === 0 && sources.length === 0 && translating.length === 0) return NO_HOOKS;
  // By endpoint; an earlier feature's translation of an endpoint is kept.
  const translations = Object.freeze(Object.assign(Object.create(null) as object, ...[...translating].reverse()));
  const [only] = started;
  return {
    started:
      started.length <= 1
        ? only
        : (request: StartedRequest) => {
            for (const start of started) start(request);
          },
    sources,
    translations,
  };
}
