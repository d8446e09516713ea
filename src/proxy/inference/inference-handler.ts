// One inference request: take the settings snapshot → read the body → resolve the model → check
// it is in the tenant's scope → size the prompt → admit it within the tenant's limits → try its
// targets in one failover loop (local nodes the scheduler admits, then remote sites), while
// nothing has reached the client → answer a refusal if none served → report it (and settle the
// tenant's reservation from the answer's usage).

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { RequestTracer } from '#src/core/tracing.ts';
import { GatewayError } from '#src/core/errors.ts';
import type { AdmissionPort, FleetReports, FleetView } from '#src/ports/index.ts';
import { POLICIES, requestFeaturesFor, servedModelName } from '#src/routing/index.ts';
import { routeRequestFor } from '#src/scheduler/index.ts';
import type { HeldBytesBudget } from '../attempt/held-budget.ts';
import { sendError, toGatewayError } from '../http/openai-error.ts';
import { errorDialectFor, type ErrorDialect } from '../http/error-dialect.ts';
import { countsOnly, takesMultipart, type InferenceEndpoint } from '#src/config/index.ts';
import { requestedChoices, requestedMaxTokens } from '../request/prompt-size.ts';
import { sizePrompt } from '../request/size-prompt.ts';
import { featureReaders } from '../request/affinity-key.ts';
import type { ProxyEvents } from '../request/proxy-events.ts';
import { discardableRemainder, readBody } from '../http/read-body.ts';
import { noteAttempt, startRequestReport, type RequestReport } from '../request/request-report.ts';
import { requestIdFor } from '../request/request-id.ts';
import { loggedPrompt } from '../request/logged-prompt.ts';
import { attemptEvent } from '../failover/attempt-feedback.ts';
import { resolveRequest } from '../request/request-model.ts';
import { fleetJsonKeys } from '../request/model-readings.ts';
import { resolveMultipartRequest } from '../request/multipart-model.ts';
import type { RequestSettings } from '../request/request-settings.ts';
import type { UpstreamPools } from '../attempt/upstream-pools.ts';
import { respondRefused } from '../refusal/respond-refused.ts';
import { acceptInboundBody, type InboundForward } from '../sites/forward-in.ts';
import { runFailover, type TargetSource } from '../failover/failover-loop.ts';
import { startFailover } from '../failover/failover-state.ts';
import { NodeTargets } from '../failover/node-target.ts';
import { SiteTargets, type RemoteDeps } from '../sites/site-target.ts';
import type { Target } from '../failover/target.ts';
import type { AttemptOutcome } from '../attempt/attempt-outcome.ts';
import { OPEN_TENANT, type Tenant } from '#src/tenants/index.ts';
import { admitAsUnknown, admitWithinLimits, OUT_OF_SCOPE_MODEL, visibleTo } from './tenant-gate.ts';
import type { QueueTenant } from '#src/routing/index.ts';

export interface InferenceDeps {
  readonly clock: Clock;
  /** The fleet view and reports ports (src/ports): the registry in-thread, a worker's mirror and messages. */
  readonly registry: Pick<FleetView, 'views' | 'snapshot'> &
    Pick<FleetReports, 'learnContext' | 'learnTokenRatio' | 'learnDecodeRate' | 'learnLackingEndpoint'>;
  readonly pools: UpstreamPools;
  /** The admission port: the in-thread Scheduler, or a worker's round trip to the one that owns every lease. */
  readonly scheduler: AdmissionPort;
  readonly events: EventBus<ProxyEvents>;
  /** The settings in force; read once per request, when it arrives. */
  readonly settings: () => RequestSettings;
  readonly heldBudget: HeldBytesBudget;
  /** A bounded metrics label for a model id. */
  readonly modelLabel: (model: string) => string;
  /** A node said it does not have a model its listing showed: re-list it. */
  readonly onModelVanished: (nodeName: string) => void;
  readonly newRequestId: () => string;
  /** Forwarding to other sites ([mesh]); absent = this gateway runs alone, with no federation work per request. */
  readonly remote?: RemoteDeps | undefined;
  /** OpenTelemetry traces ([tracing], core/tracing.ts); absent = off, and no hook does any work. */
  readonly tracer?: RequestTracer | undefined;
}

/**
 * `inbound` is set for a request another site forwarded here, its signature verified (forward-in.ts).
 * `tenant`: whom the request is admitted as, decided by the endpoint layer (the client's key, or a
 * forwarding site's `[[mesh.sites]] tenant`); undefined = no tenant (a forward from a site without
 * one: no tenant limits, every site, as before tenants).
 */
export async function handleInference(
  deps: InferenceDeps,
  endpoint: InferenceEndpoint,
  req: IncomingMessage,
  res: ServerResponse,
  inbound?: InboundForward,
  tenant?: Tenant,
): Promise<void> {
  const startedMs = deps.clock.monotonicMs();
  // Bytes written to the client: what its socket writes while this request is answered (head and body).
  const report = startRequestReport(deps, endpoint, startedMs, req.socket);
  // The client's well-formed id, else a new one: sent to the node, returned, and logged (request-id.ts).
  report.requestId = requestIdFor(req.headers['x-request-id'], deps.newRequestId);
  // The client's (or forwarding site's) W3C trace context is the request span's parent.
  report.trace = deps.tracer?.request({
    method: req.method ?? 'POST',
    endpoint,
    traceparent: req.headers.traceparent,
    tracestate: req.headers.tracestate,
    fromSite: inbound?.site,
    requestId: report.requestId,
  });
  // A forward queues as its site's tenant with the class capped by the one it stated.
  const queue: QueueTenant | undefined = inbound?.queue ?? tenant?.queue;
  report.tenant = queue?.name;
  if (inbound !== undefined)
    report.peer = { site: inbound.site, claimedTenant: inbound.claimedTenant, claimedClass: inbound.claimedClass };
  // One async frame for the whole request: every layer below that awaits costs a promise and a turn.
  try {
    const settings = deps.settings();
    const finish = report.finish;
    const requestId = report.requestId;
    // A refusal answers through `fail`: built only for a request that is refused.
    const failWith = (): Fail => failFor(res, report, errorDialectFor(endpoint));

    let raw: Buffer;
    try {
      raw = await readBody(req, settings.maxRequestBodyBytes);
      report.bytesIn = raw.length;
    } catch (error) {
      const gatewayError = toGatewayError(error);
      if (gatewayError.status === 413) {
        if (discardableRemainder(req.headers, settings.maxRequestBodyBytes)) req.resume();
        else res.setHeader('connection', 'close');
      }
      failWith()(gatewayError);
      return;
    }
    if (inbound !== undefined) {
      const refused = acceptInboundBody(inbound, req.headers, raw, deps.events);
      if (refused !== undefined) return failWith()(refused);
    }
    const servedName = (name: string): string => servedModelName(name, deps.registry.views());
    // The audio routes take multipart/form-data (their `model` is a form field); the others JSON.
    const keyMatching = (): ReturnType<typeof fleetJsonKeys> => fleetJsonKeys(deps.registry.views());
    const resolved = takesMultipart(endpoint)
      ? await resolveMultipartRequest(raw, String(req.headers['content-type'] ?? ''), settings.catalog, servedName)
      : resolveRequest(raw, settings.catalog, servedName, keyMatching);
    if (resolved instanceof GatewayError) {
      failWith()(resolved);
      return;
    }
    report.model = resolved.model;
    report.requestedModel = resolved.requestedModel;
    report.trace?.resolved(resolved.requestedModel, resolved.model);
    // [log] bodies = true only (sensitive, off by default): the prompt's text, bounded, for the line.
    if (settings.logPromptBytes !== undefined) report.prompt = loggedPrompt(endpoint, resolved.json, settings.logPromptBytes);
    const clientGone = new AbortController();
    // Aborting builds an exception object: do it only for a client that really left early. (`on`:
    // a response closes once, and `once` would wrap the listener on every request.)
    res.on('close', () => {
      if (!res.writableFinished) clientGone.abort();
    });
    const counting = countsOnly(endpoint);
    const maxTokens = counting ? undefined : requestedMaxTokens(resolved.json);
    const visible = visibleTo(tenant);
    // Out of scope: sized, routed and refused exactly as a model no node serves, and never sent anywhere.
    const outOfScope = visible !== undefined && !visible(resolved.model);
    // A count generates nothing: never sized against a context nor refused for length (config/endpoints.ts).
    const sized = {
      endpoint,
      model: outOfScope ? OUT_OF_SCOPE_MODEL : resolved.model,
      json: resolved.json,
      maxTokens,
      nowMs: deps.clock.now(),
      tokenizeTimeoutMs: settings.tokenizeTimeoutMs,
    };
    const sizing = counting ? undefined : sizePrompt(deps, sized, clientGone.signal);
    // Sized at once unless a node's tokenizer was asked: only then is there anything to wait for.
    const bounds = sizing instanceof Promise ? await sizing : sizing;
    const promptTokens = bounds?.upper;
    const exact = bounds?.exact ?? false;

    const policy = resolved.policy ?? settings.policy;
    // A policy that reads no request feature (least-in-flight, the default) has no readers built.
    const features =
      POLICIES[policy].reads.length === 0
        ? undefined
        : requestFeaturesFor(policy, featureReaders(req.headers, endpoint, resolved.json, settings));
    const facts = {
      model: resolved.model,
      group: resolved.group,
      promptTokens,
      minPromptTokens: bounds?.lower,
      maxTokens,
      policy,
      affinityKey: features?.affinityKey,
      promptPrefix: features?.promptPrefix,
      tenant: queue,
    };
    if (outOfScope) {
      const routeRequest = routeRequestFor(facts, settings, endpoint);
      const admission = await admitAsUnknown(deps.scheduler, routeRequest, settings, clientGone.signal);
      const state = startFailover(routeRequest);
      // The remote sites are asked as for any unknown model ([mesh]): none lists it, so none is
      // chosen, and their verdicts and listed models shape the 404 exactly as an unknown model's.
      const unknownAsk = {
        settings,
        endpoint,
        req,
        resolved: { ...resolved, model: OUT_OF_SCOPE_MODEL },
        requestId,
        signal: clientGone.signal,
      };
      const sites =
        deps.remote === undefined
          ? undefined
          : new SiteTargets(deps.remote, {
              ...unknownAsk,
              maxTokens,
              exactCount: exact,
              forwarded: inbound !== undefined,
              tenant: tenant?.spec,
            });
      await sites?.next(state);
      respondRefused(refusalDepsOf(deps), {
        admission,
        model: OUT_OF_SCOPE_MODEL,
        requestedModel: resolved.requestedModel,
        state,
        retryAfterSeconds: settings.retryAfterSeconds,
        sites: sites?.verdicts(state.failures),
        visible,
        outOfScope: true,
        fail: failWith(),
        finish,
      });
      return;
    }
    // The open gateway (no tenant configured) has nothing to count: no ledger work at all. A count
    // (count_tokens) reserves no tokens: it counts against the request rate only.
    if (tenant !== undefined && tenant !== OPEN_TENANT) {
      const limits = {
        tenant,
        model: resolved.model,
        promptTokens: promptTokens ?? 0,
        maxTokens: counting ? 0 : maxTokens,
        completionReserveTokens: settings.completionReserveTokens,
        choices: requestedChoices(endpoint, resolved.json),
      };
      if (!(await admitWithinLimits(deps, limits, { res, report, requestId, fail: failWith() }))) return;
    }
    // A forward's signature is used up only once it is admitted: one refused before costs no replay entry (forward-in.ts).
    const used = inbound === undefined ? undefined : await inbound.useSignature();
    if (used !== undefined) return failWith()(used);
    const onQueueWait = (waitedMs: number): void => {
      report.queueWaitMs += waitedMs;
    };
    const trace = report.trace;
    const ask = { settings, endpoint, req, resolved, requestId, signal: clientGone.signal, onQueueWait, trace };
    const nodes = new NodeTargets(deps, ask);
    const sources: TargetSource[] = [nodes];
    const sites =
      deps.remote === undefined
        ? undefined
        : new SiteTargets(deps.remote, {
            ...ask,
            maxTokens,
            exactCount: exact,
            forwarded: inbound !== undefined,
            tenant: tenant?.spec,
          });
    if (sites !== undefined) sources.push(sites);
    const setting = {
      res,
      body: resolved.body,
      startedMs,
      totalTimeoutMs: settings.totalTimeoutMs,
      clock: deps.clock,
      maxHeldBodyBytes: settings.maxHeldBodyBytes,
      heldBudget: deps.heldBudget,
      finish,
      trace,
      onAttempt: (target: Target) => {
        report.node = target.label;
      },
      onConcluded: (target: Target, outcome: AttemptOutcome) => {
        const event = attemptEvent(outcome);
        noteAttempt(report, {
          target: target.id.kind === 'node' ? target.id.name : target.id.id,
          kind: target.id.kind,
          outcome: event.result,
          status: event.status,
          route: target.route,
        });
      },
    };
    const end = await runFailover(sources, setting, startFailover(routeRequestFor(facts, settings, endpoint)));
    if (end.kind === 'answered') return;
    const admission = nodes.refusal;
    // The loop ends unserved only after the scheduler refused: the local targets come first.
    if (admission === undefined) throw new Error('the failover loop ended before the scheduler refused');
    respondRefused(refusalDepsOf(deps), {
      admission,
      model: resolved.model,
      requestedModel: resolved.requestedModel,
      state: end.state,
      retryAfterSeconds: settings.retryAfterSeconds,
      sites: sites?.verdicts(end.state.failures),
      visible,
      fail: failWith(),
      finish,
    });
  } catch (error) {
    // The server's dispatcher answers an internal error 500 (or cuts a response already started);
    // it is still a request, and must show in gateway_requests_total.
    report.finish(report.node, 500);
    throw error;
  }
}

type Fail = (error: GatewayError, headers?: Record<string, string>) => void;

/** How a refused request is answered: the error in the endpoint's dialect, with its id, then reported. */
function failFor(res: ServerResponse, report: RequestReport, dialect: ErrorDialect): Fail {
  return (error, headers = {}) => {
    report.refusal = error.code;
    sendError(res, error, { ...headers, 'x-request-id': report.requestId }, dialect);
    report.finish(undefined, error.status);
  };
}

/** What a refusal reads; built only for a request that is refused. */
function refusalDepsOf(deps: InferenceDeps): Parameters<typeof respondRefused>[0] {
  return { events: deps.events, modelLabel: deps.modelLabel, snapshot: () => deps.registry.snapshot() };
}
