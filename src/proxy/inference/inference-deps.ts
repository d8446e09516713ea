// What the inference handler is given, once per plane host: the ports to the control plane (named
// for what they are: the fleet it reads, the reports it sends, the admission it asks), the
// upstream pools, the settings in force, and the hooks the plane's features add to every request.

import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { AdmissionPort, AnswerOwner, FleetReports, FleetView } from '#src/ports/index.ts';
import type { HeldBytesBudget } from '../attempt/held-answer.ts';
import type { UpstreamPools } from '../attempt/upstream-pools.ts';
import type { EndpointTranslations, FeatureSource, HeaderMark, SourceAsk, StartedRequest } from '../feature/request-feature.ts';
import type { ProxyEvents } from '../request/proxy-events.ts';
import type { RequestSettings } from '../request/request-settings.ts';

export interface InferenceDeps {
  readonly clock: Clock;
  /** The fleet-view port: the registry in-thread, a worker's mirror. */
  readonly fleet: Pick<FleetView, 'views' | 'offering' | 'snapshot'>;
  /** The fleet-reports port: what answers teach, applied once by the registry's owner. */
  readonly reports: FleetReports;
  /** The admission port: the Scheduler in-thread, a worker's round trip to the one that owns every lease. */
  readonly admission: AdmissionPort;
  readonly pools: UpstreamPools;
  readonly events: EventBus<ProxyEvents>;
  /** The settings in force (replaced by a reload); read once per request, when it arrives. */
  settings: RequestSettings;
  readonly heldBudget: HeldBytesBudget;
  /** A bounded metrics label for a model id. */
  readonly modelLabel: (model: string) => string;
  readonly newRequestId: () => string;
  /** The node that produced an answer for a tenant (the one memory of owners); undefined = none known here. */
  readonly answerOwner?: AnswerOwner | undefined;
  /** What the plane's features add to every request (plane/request-features.ts); none = NO_HOOKS. */
  readonly hooks: RequestHooks;
}

/** The features' per-request contributions, composed once per config. */
export interface RequestHooks {
  /** Runs as each request has its id (a span opens); undefined = none. */
  readonly started: ((request: StartedRequest) => void) | undefined;
  /** The target sources tried after the local nodes', in order. */
  readonly sources: readonly ((ask: SourceAsk) => FeatureSource)[];
  /** The translations by client endpoint (none: an empty record, read once per request by its endpoint). */
  readonly translations: EndpointTranslations;
  /** The headers that mark requests a feature follows (request-marks.ts); absent or empty = none is looked up. */
  readonly marks?: readonly HeaderMark[] | undefined;
}

export const NO_TRANSLATIONS: EndpointTranslations = Object.freeze(Object.create(null) as EndpointTranslations);

export const NO_HOOKS: RequestHooks = Object.freeze({
  started: undefined,
  sources: Object.freeze([]),
  translations: NO_TRANSLATIONS,
});
