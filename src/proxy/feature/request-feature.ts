// The request plane's one seam: what an optional feature ([tenants], [mesh], [tracing], and every
// later one) adds to a request. A feature plugs in through a few optional contributions, composed
// once per config (plane/request-features.ts); an absent feature contributes nothing — no field,
// no branch, no promise, no layer:
//   - route wrappers, run before the handler: they decide who the request is served as (its
//     Caller: a client key's tenant, a forward's verified site) or refuse it;
//   - the caller's request gates, judged by the handler's spine (inference-handler.ts): on the body
//     as read, on the model resolved, and once the prompt is sized, before admission. A verdict
//     lets the request pass, refuses it (an error and its headers), answers it as a model no node
//     serves (a model outside a tenant's scope must look exactly like an unknown one), or admits it
//     with headers and something to do when the request finishes (settle a reservation);
//   - a hook when the request starts (open its span), target sources tried after the local nodes
//     (the remote sites) — one of which may own the request's session and be asked first (its
//     lead) —, and models listed beside the local ones;
//   - a header that marks a request (X-Conversation-Id): only a request that carries it tells the
//     feature where its attempts went (the spine looks the header up once; request-marks.ts), and
//     public routes of its own behind the client checks (a resumable stream's GET, lookup, DELETE).

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayError } from '#src/core/errors.ts';
import type { TargetUrl } from '#src/core/request-target.ts';
import { type InferenceEndpoint } from '#src/config/index.ts';
import { DEFAULT_TENANT } from '#src/core/tenant-class.ts';
import type { Parts } from '#src/core/part-key.ts';
import type { RequestFields } from '#src/core/request-fields.ts';
import type { QueueTenant, RouteRequest } from '#src/routing/index.ts';
import type { NodeSpec } from '#src/config/types.ts';
import type { AnswerRewrite } from '../attempt/answer-rewrite.ts';
import type { AttemptOutcome } from '../attempt/attempt-outcome.ts';
import type { UpstreamPools } from '../attempt/upstream-pools.ts';
import type { AnswerUsage } from '../attempt/answer-usage.ts';
import type { RequestAsk, TargetSource } from '../failover/failover-loop.ts';
import type { FailoverState } from '../failover/attempt-feedback.ts';
import type { TargetId } from '../failover/target.ts';
import type { SiteVerdicts } from '../refusal/refusal-answer.ts';
import type { RequestLabels, RequestReport } from '../request/request-report.ts';
import type { RequestSettings } from '../request/request-settings.ts';
import type { FleetModel } from '../request/models-list.ts';
import type { ResolvedRequest } from '../request/request-model.ts';

/** Whom a request is served as: decided by the route wrappers before the handler runs. */
export interface Caller {
  /** Its place in every model's queue (RouteRequest.tenant); the request is reported under its name. */
  readonly queue: QueueTenant;
  /** The checks its requests pass before admission, in order (none: NO_GATES). */
  readonly gates: readonly RequestGate[];
  /** The model names it may be told of (listings, a 404's suggestions); undefined = every name. */
  readonly visible?: ((name: string) => boolean) | undefined;
  /** What its requests are reported under (the request log's and metrics' tenant; features' own fields: a forward's sender). */
  readonly labels: RequestLabels;
  /** What features know of it, each under the key of the feature that owns it (core/part-key.ts); absent = nothing. */
  readonly parts?: Parts | undefined;
}

export const NO_GATES: readonly RequestGate[] = Object.freeze([]);

/** Every request's caller on a gateway with no client keys: the open `default` tenant, no gates. */
export const OPEN_CALLER: Caller = Object.freeze({
  queue: Object.freeze({ name: DEFAULT_TENANT, priority: 'standard', weight: 1 }),
  gates: NO_GATES,
  labels: Object.freeze({ tenant: DEFAULT_TENANT }),
});

/** The request is refused: this error, with these headers (a 429's x-ratelimit-*). */
export interface Refused {
  readonly kind: 'refused';
  readonly error: GatewayError;
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/**
 * The request is answered exactly as one for a model no node serves: the same admission wait, the
 * same 404, the sites asked as for an unknown model; `visible`: the names its suggestions may show.
 */
export interface AnsweredAsUnknown {
  readonly kind: 'unknown';
  readonly visible: (name: string) => boolean;
}

/** Admitted: the answer carries `headers`; `finished` runs once as the request ends, before it is reported. */
export interface Admitted {
  readonly kind: 'admitted';
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly finished?: ((status: number, usage: AnswerUsage | undefined) => void) | undefined;
}

/** The request as it stands once its prompt is sized, just before admission. */
export interface SizedRequest {
  readonly endpoint: InferenceEndpoint;
  readonly resolved: ResolvedRequest;
  readonly settings: RequestSettings;
  /** The prompt's upper bound in tokens; undefined = not sized (a count). */
  readonly promptTokens: number | undefined;
  readonly maxTokens: number | undefined;
  /** A count (count_tokens): it generates nothing. */
  readonly counts: boolean;
}

/** One check a caller's requests pass. Each stage is optional; a verdict of undefined lets the request pass. */
export interface RequestGate {
  /** The body as read, before it is parsed (a forward's must be the one it signed). */
  body?(raw: Buffer, req: IncomingMessage): Refused | undefined;
  /** The model resolved, before the prompt is sized (a tenant's model scope). */
  model?(model: string): Refused | AnsweredAsUnknown | undefined;
  /** The prompt sized, before admission (a tenant's limits, a forward's one use); may wait. */
  admit?(request: SizedRequest): Refused | Admitted | undefined | Promise<Refused | Admitted | undefined>;
}

/** A route that serves a request as `caller` (undefined: not identified yet — served as OPEN_CALLER). */
export type CallerRoute = (
  req: IncomingMessage,
  res: ServerResponse,
  url: TargetUrl,
  caller: Caller | undefined,
) => PromiseLike<void> | void;

/** How a route answers a request refused before its handler (a 401): the inference routes report it as a request. */
export type RefuseRoute = (req: IncomingMessage, res: ServerResponse, url: TargetUrl, error: GatewayError) => void;

/** Wraps a route: decides the caller (or refuses) and passes it on. */
export type RouteWrapper = (next: CallerRoute, refuse: RefuseRoute) => CallerRoute;

/**
 * How the inference routes of a plane whose features take no forwards (none gives `forwards`)
 * refuse a request claiming to be another site's forward: the header that makes the claim (looked
 * up once per request, before any client check) and the refusal (the body is never read). The
 * feature list gives it from the mesh's request half, [mesh] or not.
 */
export interface ForwardRefusal {
  readonly header: string;
  readonly refuse: (req: IncomingMessage, res: ServerResponse) => void;
}

/** What a later target source is given: the request, and what it needs to judge and sign a forward. */
export interface SourceAsk extends RequestAsk {
  readonly caller: Caller;
  readonly maxTokens: number | undefined;
  /** A tokenizer counted the prompt: its count judges remote targets as it judges nodes. */
  readonly exactCount: boolean;
}

/**
 * A later source's claim on a request whose session it owns (its last turn was served there):
 * `first` — `source` is asked before the local nodes (its one target; on failure the local nodes,
 * then every source as always); `left` — it owned the session but cannot take this turn, and the
 * local nodes route it saying `why`.
 */
export type SourceLead =
  { readonly kind: 'first'; readonly source: TargetSource } | { readonly kind: 'left'; readonly why: string };

/** Targets tried after the local nodes'; `verdicts`: what they said, for a request none served. */
export interface FeatureSource extends TargetSource {
  verdicts(failures: FailoverState['failures']): SiteVerdicts | undefined;
  /** Asked once, before any target, for a request that names a session: undefined = not its session. Absent: never asked. */
  lead?(route: RouteRequest): SourceLead | undefined;
}

/** How a request starts, as a feature's start hook reads it. */
export interface StartedRequest {
  readonly endpoint: InferenceEndpoint;
  readonly req: IncomingMessage;
  readonly caller: Caller;
  readonly report: RequestReport;
}

/** A listed model served elsewhere (another site), with where. */
export type ListedElsewhere = FleetModel & { readonly switchyard: { readonly site: string; readonly sites: readonly string[] } };

/** What a translation reads of a request: its endpoint, its model resolved, its id. */
export interface TranslationAsk {
  readonly endpoint: InferenceEndpoint;
  readonly resolved: ResolvedRequest;
  readonly requestId: string;
  /**
   * Asked again after the failover (the spine's re-choice): the nodes that answered this request
   * with a route-level 404 for `endpoint`, judged as lacking it. Absent: asked before routing.
   */
  readonly lacking?: ReadonlySet<string> | undefined;
}

/**
 * The request is served in another API than its endpoint's: sent to `endpoint` as `resolved` (its
 * body translated), the client's answer made by `rewrite`; `name` (e.g. `messages→chat`) is what
 * the answer's `x-switchyard-translated` header says; `fields`, the feature's own fields the report
 * keeps (core/request-fields.ts: what its request-log field and metric read).
 */
export interface ServedAs {
  readonly kind: 'served_as';
  readonly name: string;
  readonly fields: RequestFields;
  readonly endpoint: InferenceEndpoint;
  readonly resolved: ResolvedRequest;
  readonly rewrite: AnswerRewrite;
}

/**
 * Serves a request in another API (ServedAs), refuses one it cannot carry (a 400 naming the field),
 * or leaves it (undefined). Asked once the model is resolved, and asked again, once, for a request
 * every node asked answered with a route-level 404 (`lacking`), before any byte reached its client.
 */
export type EndpointTranslation = (ask: TranslationAsk) => ServedAs | Refused | undefined;

/** The translations by client endpoint; an endpoint absent from it is served as it came, with nothing asked. */
export type EndpointTranslations = Readonly<Partial<Record<InferenceEndpoint, EndpointTranslation>>>;

/** A marked request (it carries the feature's header), as it is about to be sent to its targets. */
export interface MarkedRequest {
  /** The header's value (non-empty). */
  readonly value: string;
  readonly endpoint: InferenceEndpoint;
  readonly caller: Caller;
  readonly stream: boolean;
  /** The client gets the answer rewritten (translated): not the bytes the node sent. */
  readonly rewritten: boolean;
}

/** What a feature is told of a marked request's attempts: each as it goes to its target, and as it ends. */
export interface MarkedAttempts {
  attempted(target: TargetId): void;
  concluded(target: TargetId, outcome: AttemptOutcome): void;
}

/** A header that marks the requests a feature follows; a request without it runs nothing of the feature. */
export interface HeaderMark {
  /** Lower case, as node:http keys it. */
  readonly header: string;
  /** Undefined: nothing to follow for this request. */
  marked(request: MarkedRequest): MarkedAttempts | undefined;
}

/**
 * Serves one request as an inference request of `endpoint`, as `caller`, through the whole spine
 * (gates, admission, failover, answer, report): what a feature's route does with a request it
 * takes on someone's behalf (a batch's line, as its job's tenant).
 */
export type ServeInference = (
  endpoint: InferenceEndpoint,
  req: IncomingMessage,
  res: ServerResponse,
  caller: Caller,
) => PromiseLike<void> | void;

/** What a feature's own public routes are given by the plane they are built on. */
export interface FeatureRouteDeps {
  /** The node of that name in the fleet now; undefined = gone. */
  readonly node: (name: string) => { readonly spec: NodeSpec } | undefined;
  readonly pools: Pick<UpstreamPools, 'get'>;
  /** The one memory of owners, read; undefined = none known here. */
  readonly answerOwner: ((tenant: string, ownedId: string) => string | undefined | Promise<string | undefined>) | undefined;
  readonly newRequestId: () => string;
  /** Serves a request through the whole inference spine as a given caller. */
  readonly serve: ServeInference;
}

/**
 * A public route a feature serves itself on the inference listener (a resumable stream's GET,
 * lookup and DELETE; the Files and Batches API): `path` is exact, or a subtree (`/v1/files/*`).
 * A keyed route (the default) gets the caller the client checks decide (the open caller without
 * any), as the model listings do; an unkeyed one (`keyed: false`) is asked no client key and
 * identifies its request itself (it gets undefined).
 */
export interface FeatureRoute {
  readonly method: string;
  readonly path: string;
  readonly keyed?: boolean | undefined;
  readonly route: CallerRoute;
}

/** What one feature adds to the request plane; every contribution is optional. */
export interface RequestFeature {
  /** Identifies a client before every keyed public route (inference and listings), or refuses it. */
  readonly clients?: RouteWrapper | undefined;
  /** Wraps the inference routes outside the client check: takes requests other sites forward (verified, or refused). */
  readonly forwards?: RouteWrapper | undefined;
  /** A request has its id: what the feature starts with it (its span). */
  readonly started?: ((request: StartedRequest) => void) | undefined;
  /** Targets tried after the local nodes' (the remote sites). */
  readonly targets?: ((ask: SourceAsk) => FeatureSource) | undefined;
  /** Per client endpoint: serves its requests in another API when no node for the model speaks it (the translations). */
  readonly translations?: EndpointTranslations | undefined;
  /** Models served elsewhere, listed beside `local` for `caller`. */
  readonly models?: ((caller: Caller, local: readonly { readonly id: string }[]) => readonly ListedElsewhere[]) | undefined;
  /** The requests it follows: those carrying its header, told where their attempts went. */
  readonly marks?: HeaderMark | undefined;
  /** Public routes of its own (built once per table, over the plane's pools, fleet and spine; none runs for another path). */
  readonly routes?: ((deps: FeatureRouteDeps) => readonly FeatureRoute[]) | undefined;
}
