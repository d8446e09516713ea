// One inference request, as a spine of named steps: settings → body → model → gates → size →
// send (the gateway's own answer where it gives one, else failover over the sources) → answer →
// report; a request every node asked answered with a route-level 404 for its endpoint is
// translated then, once, and sized and sent again (#rechosen). The caller's gates are judged where
// what they read is known: the bytes, the model, then the sized prompt before admission. Every step is the same for every request; what an optional
// feature adds comes in through the seam
// (../feature/request-feature.ts): the caller's gates (a forward's signed body, a tenant's scope
// and limits), the later target sources (the remote sites), the start hook (a span). A request
// whose caller has no gates, on a plane with no feature, runs nothing else.
//
// The request is one object (InferenceRun): what the failover loop asks of it (RequestAsk,
// AttemptSetting) and what the gates judge (SizedRequest) are its fields, filled in step by step.
// The body is read through callbacks; a step that may wait (a multipart form, a tokenizer, a gate
// that asks) goes on when its promise settles; the failover tells its end to the run itself
// (failoverEnded), so a plain request makes no promise.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '#src/core/clock.ts';
import { GatewayError } from '#src/core/errors.ts';
import { ENDPOINT_TRAITS, type InferenceEndpoint } from '#src/config/index.ts';
import { routeRequestFor, type RouteRequest } from '#src/routing/index.ts';
import type { AnswerRewrite } from '../attempt/answer-rewrite.ts';
import type { AttemptOutcome } from '../attempt/attempt-outcome.ts';
import type { HeldBytesBudget } from '../attempt/held-answer.ts';
import { Answering } from '../http/server.ts';
import { readBodyInto, type BodySink } from '../http/read-body.ts';
import {
  startFailoverRun,
  type AttemptSetting,
  type FailoverEnd,
  type FailoverReceiver,
  type RequestAsk,
  type TargetSource,
} from '../failover/failover-loop.ts';
import { endpointLackers, startFailover, type FailoverState } from '../failover/attempt-feedback.ts';
import { NodeTargets } from '../failover/node-target.ts';
import type { Target } from '../failover/target.ts';
import {
  OPEN_CALLER,
  type AnsweredAsUnknown,
  type Caller,
  type FeatureSource,
  type MarkedAttempts,
  type MarkedRequest,
  type ServedAs,
  type SizedRequest,
  type SourceAsk,
} from '../feature/request-feature.ts';
import { judgeAdmission, judgeBody, judgeModel } from '../feature/request-gates.ts';
import { markedAttempts, type MarkFacts } from '../feature/request-marks.ts';
import { requestedMaxTokens, type PromptBounds } from '../request/prompt-size.ts';
import type { ResolvedRequest } from '../request/request-model.ts';
import type { FinishFigures, RequestObserver, RequestReport } from '../request/request-report.ts';
import type { RequestSettings } from '../request/request-settings.ts';
import type { AnsweredHere } from '../request/gateway-count.ts';
import { GATEWAY_ANSWERS } from './gateway-answers.ts';
import type { InferenceDeps } from './inference-deps.ts';
import { answerAsUnknown, UNKNOWN_TO_CALLER } from './unknown-answer.ts';
import {
  answerUnserved,
  bodyRefused,
  clientGoneSignal,
  failFor,
  noteConcluded,
  noteModel,
  noteServedAs,
  reportFor,
  resolveModel,
  routeFacts,
  sendAnswered,
  sizeRequest,
} from './inference-steps.ts';

/** `caller`: whom the route wrappers decided the request is served as (OPEN_CALLER: no client keys, no forward). */
export function handleInference(
  deps: InferenceDeps,
  endpoint: InferenceEndpoint,
  req: IncomingMessage,
  res: ServerResponse,
  caller: Caller = OPEN_CALLER,
): Answering {
  // settings: one snapshot for the whole request; the report starts with its id.
  const run = new InferenceRun(deps, endpoint, req, res, caller);
  try {
    // body: bounded, read through callbacks; the rest of the spine runs as it arrives.
    readBodyInto(req, run.settings.maxRequestBodyBytes, run);
  } catch (error) {
    run.failedInternally(error);
    throw error;
  }
  return run;
}

/**
 * What a step gives back: done (answered or refused), the promise it goes on from, or RUNNING: the
 * failover run is under way and tells its end itself (failoverEnded), no promise between.
 */
type Step = Promise<unknown> | undefined | typeof RUNNING;
const RUNNING = Symbol('the failover tells its end');

const NO_LATER: readonly FeatureSource[] = Object.freeze([]);

/** One request as it goes through the spine: each step a method, each fact a field once known. */
class InferenceRun extends Answering implements BodySink, RequestAsk, AttemptSetting, SizedRequest, MarkFacts, FailoverReceiver {
  readonly settings: RequestSettings;
  /** The endpoint the request is sent to: the client's, or the one a translation serves it over. */
  endpoint: InferenceEndpoint;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly requestId: string;
  readonly observer: RequestObserver | undefined;
  readonly startedMs: number;
  readonly totalTimeoutMs: number;
  readonly maxHeldBodyBytes: number;
  readonly clock: Clock;
  readonly heldBudget: HeldBytesBudget;
  readonly counts: boolean;
  resolved!: ResolvedRequest;
  body!: Buffer;
  signal!: AbortSignal;
  maxTokens: number | undefined;
  promptTokens: number | undefined;
  /** A translated request's answer, as the client gets it; undefined = the node's as it came. */
  rewrite: AnswerRewrite | undefined;
  /** The client's endpoint: its errors are worded in its dialect. */
  readonly #asked: InferenceEndpoint;
  readonly #deps: InferenceDeps;
  readonly #caller: Caller;
  readonly #report: RequestReport;
  #nodes: NodeTargets | undefined;
  #later: readonly FeatureSource[];
  /** What a feature follows of this request's attempts (it carries the feature's header); undefined = none. */
  #marked: MarkedAttempts | undefined;

  constructor(deps: InferenceDeps, endpoint: InferenceEndpoint, req: IncomingMessage, res: ServerResponse, caller: Caller) {
    super();
    const report = reportFor(deps, endpoint, req, caller);
    const settings = deps.settings;
    this.#deps = deps;
    this.#caller = caller;
    this.#report = report;
    this.settings = settings;
    this.endpoint = endpoint;
    this.#asked = endpoint;
    this.req = req;
    this.res = res;
    this.requestId = report.requestId;
    this.observer = report.observer;
    this.startedMs = report.startedMs;
    this.totalTimeoutMs = settings.totalTimeoutMs;
    this.maxHeldBodyBytes = settings.maxHeldBodyBytes;
    this.clock = deps.clock;
    this.heldBudget = deps.heldBudget;
    this.counts = ENDPOINT_TRAITS[endpoint].countsOnly;
    this.maxTokens = undefined;
    this.promptTokens = undefined;
    this.rewrite = undefined;
    this.#nodes = undefined;
    this.#later = NO_LATER;
    this.#marked = undefined;
  }

  /** The body is read: the rest of the spine, a failure of any step answered as the server's 500. */
  bodyRead(raw: Buffer): void {
    let waiting: Step;
    try {
      waiting = this.#fromBody(raw);
    } catch (error) {
      this.failedInternally(error);
      return;
    }
    this.#follow(waiting);
  }

  /** The body could not be read (too large, cut, too slow): refused. */
  bodyFailed(error: GatewayError, bytesSeen: number): void {
    this.#report.bytesIn = bytesSeen;
    try {
      bodyRefused(this.req, this.res, this.settings, error, this.#fail());
    } catch (thrown) {
      this.failedInternally(thrown);
      return;
    }
    this.answered();
  }

  /**
   * An internal error: the server's dispatcher answers it 500 (or cuts a response already started);
   * it is still a request, and must show in gateway_requests_total. Every other end reported itself
   * (report.finish runs once).
   */
  failedInternally(error: unknown): void {
    this.#report.finish(this.#report.node, 500);
    this.failed(error);
  }

  /** The failover's end reported, once (its node, status and figures). */
  finish(node: string | undefined, status: number, extra?: FinishFigures): void {
    this.#report.finish(node, status, extra);
  }

  /** Told each time the request waited in its model's queue (the request log's queue wait). */
  onQueueWait(waitedMs: number): void {
    this.#report.queueWaitMs += waitedMs;
  }

  /** The report names the node of the attempt in progress (if the attempt throws, too). */
  onAttempt(target: Target): void {
    this.#report.node = target.label;
    this.#marked?.attempted(target.id);
  }

  onConcluded(target: Target, outcome: AttemptOutcome): void {
    noteConcluded(this.#report, target, outcome);
    this.#marked?.concluded(target.id, outcome);
  }

  /** The failover run's end (the local nodes and the later sources asked). */
  failoverEnded(end: FailoverEnd): void {
    this.#ended(end);
  }

  /** The failover run threw: the server's 500. */
  failoverFailed(error: unknown): void {
    this.failedInternally(error);
  }

  /** Answered when the step is done, or when the promise it goes on from settles; a running failover tells its end itself. */
  #follow(waiting: Step): void {
    if (waiting === RUNNING) return;
    if (waiting === undefined) this.answered();
    else
      waiting.then(
        (value) => this.#ended(value),
        (error: unknown) => this.failedInternally(error),
      );
  }

  /**
   * The failover's end: served already, sent again translated (every node asked lacked the
   * endpoint), or refused by the one refusal renderer with what every source said.
   */
  #ended(value: unknown): void {
    // A promised step that went on into the failover: its end comes through failoverEnded.
    if (value === RUNNING) return;
    const end = value as FailoverEnd | undefined;
    const nodes = this.#nodes;
    let again: Step | false = false;
    try {
      if (nodes !== undefined && end?.kind === 'unserved') {
        again = this.#rechosen(end.state);
        const { resolved, settings } = this;
        if (again === false)
          answerUnserved(this.#deps, {
            nodes,
            later: this.#later,
            end,
            resolved,
            settings,
            caller: this.#caller,
            fail: this.#fail(),
            report: this.#report,
          });
      }
    } catch (error) {
      this.failedInternally(error);
      return;
    }
    if (again === false) this.answered();
    else this.#follow(again);
  }

  /**
   * translate, again: every node the failover asked answered a route-level 404 for the client's
   * endpoint (its kind was taken to serve it), and nothing reached the client. Asked once more with
   * those nodes lacking it, the translation may serve the request over another API (no node for the
   * model speaks the client's any more): it is sized and sent again, its gates not judged twice.
   * false: not re-chosen (a translated request, an endpoint no translation serves, a client gone).
   */
  #rechosen(state: FailoverState): Step | false {
    if (this.rewrite !== undefined || this.signal.aborted || this.res.headersSent) return false;
    const translation = this.#deps.hooks.translations[this.#asked];
    const lacking = translation === undefined ? undefined : endpointLackers(state);
    if (translation === undefined || lacking === undefined) return false;
    const served = translation({ endpoint: this.#asked, resolved: this.resolved, requestId: this.requestId, lacking });
    if (served === undefined) return false;
    if (served.kind === 'refused') return this.#refuse(served.error, served.headers);
    const resolved = this.#servedAs(served);
    const sizing = this.#sizing(resolved, resolved.model);
    return sizing instanceof Promise ? sizing.then((bounds) => this.#resent(bounds)) : this.#resent(sizing);
  }

  /** The re-chosen request, sized: routed and sent as any (its gates were judged before its first failover). */
  #resent(bounds: PromptBounds | undefined): Step {
    this.promptTokens = bounds?.upper;
    return this.#send(routeRequestFor(routeFacts(this.req, this, bounds, this.#caller), this.settings, this.endpoint), bounds);
  }

  /** How a refusal is answered: built only for a request that is refused. */
  #fail(): ReturnType<typeof failFor> {
    return failFor(this.res, this.#report, this.#asked);
  }

  /** Refused: answered in the endpoint's dialect, with its id, and reported. */
  #refuse(error: GatewayError, headers?: Readonly<Record<string, string>>): undefined {
    this.#fail()(error, headers);
    return undefined;
  }

  /** body → the gates that judge the bytes (a forward's signed digest) → the model (a multipart form's field waits). */
  #fromBody(raw: Buffer): Step {
    this.#report.bytesIn = raw.length;
    const { gates } = this.#caller;
    if (gates.length > 0) {
      const badBody = judgeBody(gates, raw, this.req);
      if (badBody !== undefined) return this.#refuse(badBody.error, badBody.headers);
    }
    const resolving = resolveModel(this.#deps, this.endpoint, this.req, raw, this.settings);
    return resolving instanceof Promise ? resolving.then((resolved) => this.#fromModel(resolved)) : this.#fromModel(resolving);
  }

  /** model → the gates on it (pass, refuse, or answer it as a model no node serves: a tenant's scope) → translate → size. */
  #fromModel(asked: ResolvedRequest | GatewayError): Step {
    if (asked instanceof GatewayError) return this.#refuse(asked);
    noteModel(this.#report, this.endpoint, asked, this.settings);
    const { gates } = this.#caller;
    const scoped = gates.length === 0 ? undefined : judgeModel(gates, asked.model);
    if (scoped?.kind === 'refused') return this.#refuse(scoped.error, scoped.headers);
    // translate: an endpoint a feature translates (no node for the model speaks it) is served in another API.
    const translation = scoped === undefined ? this.#deps.hooks.translations[this.endpoint] : undefined;
    const served = translation?.({ endpoint: this.endpoint, resolved: asked, requestId: this.requestId });
    if (served?.kind === 'refused') return this.#refuse(served.error, served.headers);
    const resolved = served === undefined ? asked : this.#servedAs(served);
    this.signal = clientGoneSignal(this.res);
    // size: a hidden model is sized as the unknown name it is routed as.
    const sizing = this.#sizing(resolved, scoped === undefined ? resolved.model : UNKNOWN_TO_CALLER);
    return sizing instanceof Promise ? sizing.then((bounds) => this.#sized(bounds, scoped)) : this.#sized(sizing, scoped);
  }

  /** The request as it is sent (its body, what it asks to generate), sized as `model`: at once unless a node's tokenizer is asked. */
  #sizing(resolved: ResolvedRequest, model: string): PromptBounds | undefined | Promise<PromptBounds> {
    this.resolved = resolved;
    this.body = resolved.body;
    this.maxTokens = this.counts ? undefined : requestedMaxTokens(resolved.json);
    return sizeRequest(this.#deps, this, model);
  }

  /** The request is sent to another endpoint, its answer rewritten for the client; the answer and the report say so. */
  #servedAs(served: ServedAs): ResolvedRequest {
    this.endpoint = served.endpoint;
    this.rewrite = served.rewrite;
    noteServedAs(this.res, this.#report, served);
    return served.resolved;
  }

  /** size → routing facts → the hidden model's answer, or the gates before admission (a tenant's limits, a forward's one use). */
  #sized(bounds: PromptBounds | undefined, scoped: AnsweredAsUnknown | undefined): Step {
    this.promptTokens = bounds?.upper;
    const routeRequest = routeRequestFor(routeFacts(this.req, this, bounds, this.#caller), this.settings, this.endpoint);
    // answer: a gate hid the model (a tenant's scope): refused exactly as an unknown model, sent nowhere.
    if (scoped !== undefined) {
      const ask = this.#sourceAsk(bounds, undefined);
      return answerAsUnknown(this.#deps, { routeRequest, ask, verdict: scoped, fail: this.#fail(), report: this.#report });
    }
    const { gates } = this.#caller;
    if (gates.length === 0) return this.#send(routeRequest, bounds);
    // A promise only for a gate that waits.
    const judging = judgeAdmission(gates, this, this.res, this.#report);
    if (judging instanceof Promise)
      return judging.then((refused) =>
        refused === undefined ? this.#send(routeRequest, bounds) : this.#refuse(refused.error, refused.headers),
      );
    return judging === undefined ? this.#send(routeRequest, bounds) : this.#refuse(judging.error, judging.headers);
  }

  /** send: answered by the gateway itself where it answers the endpoint (gateway-answers.ts: a count no node makes), else the failover. */
  #send(routeRequest: RouteRequest, bounds: PromptBounds | undefined): Step {
    const here = GATEWAY_ANSWERS[this.endpoint];
    const answered = here === undefined ? undefined : here(this.#deps, this);
    if (answered === undefined) return this.#failover(routeRequest, bounds);
    return answered instanceof Promise ? answered.then((answer) => this.#answered(answer)) : this.#answered(answered);
  }

  /** The gateway's own answer, or its refusal in the endpoint's dialect. */
  #answered(answer: AnsweredHere | GatewayError): undefined {
    if (answer instanceof GatewayError) return this.#refuse(answer);
    sendAnswered(this.res, this.#report, answer);
    return undefined;
  }

  /** failover over the sources: the local nodes the scheduler admits, then the features' (the remote sites). */
  #failover(routeRequest: RouteRequest, bounds: PromptBounds | undefined): Step {
    const nodes = new NodeTargets(this.#deps, this);
    this.#nodes = nodes;
    const { sources, marks } = this.#deps.hooks;
    // A feature's header (X-Conversation-Id): only a request carrying it is followed.
    if (marks !== undefined && marks.length > 0) this.#marked = markedAttempts(marks, this.req, this);
    if (sources.length === 0) return this.#run([nodes], routeRequest);
    const ask = this.#sourceAsk(bounds, this.observer);
    const later = sources.map((source) => source(ask));
    this.#later = later;
    if (routeRequest.sessionKey === undefined) return this.#run([nodes, ...later], routeRequest);
    // A session a later source owns (a remote site served its last turn): that source first, or the reason it left.
    for (const source of later) {
      const lead = source.lead?.(routeRequest);
      if (lead === undefined) continue;
      const route = { ...routeRequest, sessionSiteLeft: lead.kind === 'left' ? lead.why : 'failed this request' };
      const order = lead.kind === 'first' ? [lead.source, nodes, ...later] : [nodes, ...later];
      return this.#run(order, route);
    }
    return this.#run([nodes, ...later], routeRequest);
  }

  /** The failover run over `sources`, telling its end to this request (failoverEnded): no promise between. */
  #run(sources: readonly TargetSource[], routeRequest: RouteRequest): typeof RUNNING {
    startFailoverRun(sources, this, startFailover(routeRequest), this);
    return RUNNING;
  }

  /** A marked request's facts, as a feature's header mark reads them (asked only of a request carrying its header). */
  markedFacts(): Omit<MarkedRequest, 'value'> {
    return { endpoint: this.endpoint, caller: this.#caller, stream: this.resolved.stream, rewritten: this.rewrite !== undefined };
  }

  /** What a later source (or the hidden model's answer) is given: the request, its caller and its sizing. */
  #sourceAsk(bounds: PromptBounds | undefined, observer: RequestObserver | undefined): SourceAsk {
    return {
      settings: this.settings,
      endpoint: this.endpoint,
      req: this.req,
      resolved: this.resolved,
      requestId: this.requestId,
      signal: this.signal,
      observer,
      caller: this.#caller,
      maxTokens: this.maxTokens,
      exactCount: bounds?.exact ?? false,
    };
  }
}
