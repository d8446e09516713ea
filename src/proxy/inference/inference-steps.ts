// The inference spine's steps (inference-handler.ts), each a plain function of what the request
// has got to: how its report starts, a body refused, the model resolved and noted, the request's
// own facts, its size, its routing facts, what every attempt shares, and the refusal when no
// source served it.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayError } from '#src/core/errors.ts';
import { ENDPOINT_TRAITS, type InferenceEndpoint } from '#src/config/index.ts';
import { POLICIES, requestFeaturesFor, servedModelName, type RequestFacts } from '#src/routing/index.ts';
import type { AttemptOutcome } from '../attempt/attempt-outcome.ts';
import { errorDialectFor } from '../http/error-dialect.ts';
import { sendError, toGatewayError } from '../http/openai-error.ts';
import { discardableRemainder } from '../http/read-body.ts';
import { attemptEvent } from '../failover/attempt-feedback.ts';
import type { FailoverEnd } from '../failover/failover-loop.ts';
import type { NodeTargets } from '../failover/node-target.ts';
import type { Target } from '../failover/target.ts';
import type { Caller, FeatureSource, ServedAs } from '../feature/request-feature.ts';
import { respondRefused, type RefusalDeps } from '../refusal/respond-refused.ts';
import { featureReaders } from '../request/affinity-key.ts';
import { loggedPrompt } from '../request/logged-prompt.ts';
import { fleetJsonKeys } from '../request/model-readings.ts';
import { resolveMultipartRequest } from '../request/multipart-model.ts';
import { resolveRequest, type ResolvedRequest } from '../request/request-model.ts';
import { noteAttempt, requestIdFor, setFields, startRequestReport, type RequestReport } from '../request/request-report.ts';
import type { RequestSettings } from '../request/request-settings.ts';
import type { AnsweredHere } from '../request/gateway-count.ts';
import { sizePrompt, type PromptBounds } from '../request/prompt-size.ts';
import type { InferenceDeps } from './inference-deps.ts';

export type Fail = (error: GatewayError, headers?: Readonly<Record<string, string>>) => void;

/** The request's report, with its id (the client's well-formed one, else a new one), its caller, and the features' start. */
export function reportFor(deps: InferenceDeps, endpoint: InferenceEndpoint, req: IncomingMessage, caller: Caller): RequestReport {
  // Bytes written to the client: what its socket writes while this request is answered (head and body).
  const report = startRequestReport(deps, endpoint, deps.clock.monotonicMs(), req.socket);
  // Sent to the node, returned, and logged (request-report.ts).
  report.requestId = requestIdFor(req.headers['x-request-id'], deps.newRequestId);
  report.labels = caller.labels;
  deps.hooks.started?.({ endpoint, req, caller, report });
  return report;
}

/** How a refused request is answered: the error in the endpoint's dialect, with its id, then reported. */
export function failFor(res: ServerResponse, report: RequestReport, endpoint: InferenceEndpoint): Fail {
  const dialect = errorDialectFor(endpoint);
  return (error, headers = {}) => {
    report.refusal = error.code;
    sendError(res, error, { ...headers, 'x-request-id': report.requestId }, dialect);
    report.finish(undefined, error.status);
  };
}

/** The body could not be read (too large, cut, too slow): refused, the rest discarded when that is cheap, else the connection closed. */
export function bodyRefused(
  req: IncomingMessage,
  res: ServerResponse,
  settings: RequestSettings,
  error: unknown,
  fail: Fail,
): void {
  const gatewayError = toGatewayError(error);
  if (gatewayError.status === 413) {
    if (discardableRemainder(req.headers, settings.maxRequestBodyBytes)) req.resume();
    else res.setHeader('connection', 'close');
  }
  fail(gatewayError);
}

/** The model the body names (aliases, default; the audio routes' multipart form field), or why it is refused. */
export function resolveModel(
  deps: InferenceDeps,
  endpoint: InferenceEndpoint,
  req: IncomingMessage,
  raw: Buffer,
  settings: RequestSettings,
): ResolvedRequest | GatewayError | Promise<ResolvedRequest | GatewayError> {
  const servedName = (name: string): string => servedModelName(name, deps.fleet.views(), deps.fleet.offering?.(name));
  if (ENDPOINT_TRAITS[endpoint].takesMultipart)
    return resolveMultipartRequest(raw, String(req.headers['content-type'] ?? ''), settings.catalog, servedName);
  return resolveRequest(raw, settings.catalog, servedName, () => fleetJsonKeys(deps.fleet.views()));
}

export function noteModel(
  report: RequestReport,
  endpoint: InferenceEndpoint,
  resolved: ResolvedRequest,
  settings: RequestSettings,
): void {
  report.model = resolved.model;
  report.requestedModel = resolved.requestedModel;
  report.observer?.resolved(resolved.requestedModel, resolved.model);
  // [log] bodies = true only (sensitive, off by default): the prompt's text, bounded, for the line.
  if (settings.logPromptBytes !== undefined) report.prompt = loggedPrompt(endpoint, resolved.json, settings.logPromptBytes);
}

/** What a translated request's answer carries: the translation's name (e.g. `messages→chat`). */
export const TRANSLATED_HEADER = 'x-switchyard-translated';

/**
 * The request is served in another API than its endpoint's: its answer (every one, refusals too) and
 * its report say which. A header carries ASCII only: the name's arrow is written `->` there
 * (`messages->chat`); the report keeps the feature's own fields (what its log field and metric say).
 */
export function noteServedAs(res: ServerResponse, report: RequestReport, served: Pick<ServedAs, 'name' | 'fields'>): void {
  setFields(report, served.fields);
  res.setHeader(TRANSLATED_HEADER, served.name.replaceAll('→', '->'));
}

/** The request's own facts: what it asks to generate, and the signal aborted when its client leaves early. */
export interface RequestOf {
  readonly endpoint: InferenceEndpoint;
  readonly resolved: ResolvedRequest;
  readonly settings: RequestSettings;
  /** A count (count_tokens) generates nothing: never sized against a context nor refused for length (config/endpoints.ts). */
  readonly counts: boolean;
  readonly maxTokens: number | undefined;
  readonly signal: AbortSignal;
}

/** The signal aborted when the client leaves before its answer is finished. */
export function clientGoneSignal(res: ServerResponse): AbortSignal {
  const clientGone = new AbortController();
  // Aborting builds an exception object: do it only for a client that really left early. (`on`:
  // a response closes once, and `once` would wrap the listener on every request.)
  res.on('close', () => {
    if (!res.writableFinished) clientGone.abort();
  });
  return clientGone.signal;
}

/** The prompt's bounds for `model` (the name it is routed as); a count is not sized. */
export function sizeRequest(deps: InferenceDeps, r: RequestOf, model: string): PromptBounds | undefined | Promise<PromptBounds> {
  if (r.counts) return undefined;
  const { settings } = r;
  const ask = {
    endpoint: r.endpoint,
    model,
    json: r.resolved.json,
    maxTokens: r.maxTokens,
    nowMs: deps.clock.now(),
    tokenizeTimeoutMs: settings.tokenizeTimeoutMs,
  };
  return sizePrompt(deps, ask, r.signal);
}

/** What routing reads of the request; a policy that reads no request feature (least-in-flight, the default) has no readers built. */
export function routeFacts(req: IncomingMessage, r: RequestOf, bounds: PromptBounds | undefined, caller: Caller): RequestFacts {
  const { resolved, settings } = r;
  const policy = resolved.policy ?? settings.policy;
  const features =
    POLICIES[policy].reads.length === 0
      ? undefined
      : requestFeaturesFor(policy, featureReaders(req.headers, r.endpoint, resolved.json, settings));
  return {
    model: resolved.model,
    group: resolved.group,
    promptTokens: bounds?.upper,
    minPromptTokens: bounds?.lower,
    maxTokens: r.maxTokens,
    policy,
    affinityKey: features?.affinityKey,
    promptPrefix: features?.promptPrefix,
    sessionKey: features?.sessionKey,
    previousResponseId: features?.previousResponseId,
    tenant: caller.queue,
  };
}

/** How an attempt ended, kept on the report (the request log's attempts). */
export function noteConcluded(report: RequestReport, target: Target, outcome: AttemptOutcome): void {
  const event = attemptEvent(outcome);
  noteAttempt(report, {
    target: target.id.kind === 'node' ? target.id.name : target.id.id,
    kind: target.id.kind,
    outcome: event.result,
    status: event.status,
    route: target.route,
  });
}

/** What a refusal reads; built only for a request that is refused. */
export function refusalDeps(deps: InferenceDeps): RefusalDeps {
  return { events: deps.events, modelLabel: deps.modelLabel, snapshot: () => deps.fleet.snapshot() };
}

export interface Unserved {
  readonly nodes: NodeTargets;
  readonly later: readonly FeatureSource[];
  readonly end: Extract<FailoverEnd, { kind: 'unserved' }>;
  readonly resolved: ResolvedRequest;
  readonly settings: RequestSettings;
  readonly caller: Caller;
  readonly fail: Fail;
  readonly report: RequestReport;
}

/** No source served the request: the scheduler's refusal (the local targets come first), with what the later sources said. */
export function answerUnserved(deps: InferenceDeps, u: Unserved): void {
  const admission = u.nodes.refusal;
  if (admission === undefined) throw new Error('the failover loop ended before the scheduler refused');
  respondRefused(refusalDeps(deps), {
    admission,
    model: u.resolved.model,
    requestedModel: u.resolved.requestedModel,
    state: u.end.state,
    retryAfterSeconds: u.settings.retryAfterSeconds,
    sites: u.later[0]?.verdicts(u.end.state.failures),
    visible: u.caller.visible,
    fail: u.fail,
    finish: (node, status, extra) => u.report.finish(node, status, extra),
  });
}

/** The gateway answered the request itself (gateway-answers.ts): written with its id, then reported (no node). */
export function sendAnswered(res: ServerResponse, report: RequestReport, answer: AnsweredHere): void {
  if (!res.headersSent && !res.destroyed)
    res.writeHead(answer.status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(answer.body),
      ...answer.headers,
      'x-request-id': report.requestId,
    });
  res.end(answer.body);
  report.finish(undefined, answer.status);
}
