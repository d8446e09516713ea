// One inference request: take the settings snapshot → read the body → resolve the model → size the
// prompt → admit (the scheduler routes, leases, maybe queues) → forward, failing over while nothing
// has reached the client → report what happened.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import { GatewayError } from '#src/core/errors.ts';
import { nodePathPrefix } from '#src/config/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import type { AdmissionPort, FleetReports, FleetView } from '#src/ports/index.ts';
import { mayTruncateAt, requestFeaturesFor, servedModelName, type RouteRequest } from '#src/routing/index.ts';
import { routeRequestFor } from '#src/scheduler/index.ts';
import { forwardAttempt, type AttemptOutcome } from './forward.ts';
import type { HeldBytesBudget } from './held-budget.ts';
import { upstreamRequestHeaders } from './hop-headers.ts';
import { sendError, toGatewayError } from './openai-error.ts';
import { promptText, requestedMaxTokens, typicalTokens } from './prompt-size.ts';
import { learnFromAnswer, sizePrompt } from './size-prompt.ts';
import { loadOutcomeOf } from './load-outcome.ts';
import { judgeOverflowRefusal, overflowFacts } from './overflow-refusal.ts';
import { featureReaders } from './affinity-key.ts';
import type { ProxyEvents } from './proxy-events.ts';
import { discardableRemainder, readBody } from './read-body.ts';
import { startRequestReport, type RequestReport } from './request-report.ts';
import { resolveRequest } from './request-model.ts';
import type { RequestSettings } from './request-settings.ts';
import type { UpstreamErrorMeaning } from './upstream-error.ts';
import type { UpstreamPools } from './upstream-pools.ts';
import { respondRefused, type SiteVerdicts } from './respond-refused.ts';
import { forwardToSites, type RemoteDeps } from './remote-forward.ts';
import { acceptInboundBody, type InboundForward } from './forward-in.ts';

export interface InferenceDeps {
  readonly clock: Clock;
  /** The fleet view and reports ports (src/ports): the registry in-thread, a worker's mirror and messages. */
  readonly registry: Pick<FleetView, 'views' | 'snapshot'> & Pick<FleetReports, 'learnContext' | 'learnTokenRatio'>;
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
}

/** `inbound` is set for a request another site forwarded here, its signature verified (forward-in.ts). */
export async function handleInference(deps: InferenceDeps, endpoint: string, req: IncomingMessage, res: ServerResponse, inbound?: InboundForward): Promise<void> {
  const startedMs = deps.clock.monotonicMs();
  const report = startRequestReport(deps, endpoint, startedMs);
  try {
    await serveInference(deps, { settings: deps.settings(), endpoint, req, res, startedMs, report, inbound });
  } catch (error) {
    // The server's dispatcher answers an internal error 500 (or cuts a response already started);
    // it is still a request, and must show in gateway_requests_total.
    report.finish(report.node, 500);
    throw error;
  }
}

interface RequestContext {
  readonly settings: RequestSettings;
  readonly endpoint: string;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly startedMs: number;
  readonly report: RequestReport;
  readonly inbound: InboundForward | undefined;
}

async function serveInference(deps: InferenceDeps, context: RequestContext): Promise<void> {
  const { settings, endpoint, req, res, startedMs, report, inbound } = context;
  const finish = report.finish;
  const requestId = deps.newRequestId();
  const fail = (error: GatewayError): void => {
    sendError(res, error, { 'x-request-id': requestId });
    finish(undefined, error.status);
  };

  let raw: Buffer;
  try {
    raw = await readBody(req, settings.maxRequestBodyBytes);
  } catch (error) {
    const gatewayError = toGatewayError(error);
    if (gatewayError.status === 413) {
      if (discardableRemainder(req.headers, settings.maxRequestBodyBytes)) req.resume();
      else res.setHeader('connection', 'close');
    }
    fail(gatewayError);
    return;
  }
  if (inbound !== undefined) {
    const refused = acceptInboundBody(inbound, req.headers, raw, deps.events);
    if (refused !== undefined) return fail(refused);
  }
  const resolved = resolveRequest(raw, settings.catalog, (name) => servedModelName(name, deps.registry.views()));
  if (resolved instanceof GatewayError) {
    fail(resolved);
    return;
  }
  report.model = resolved.model;
  const clientGone = new AbortController();
  // Aborting builds an exception object: do it only for a client that really left early.
  res.once('close', () => {
    if (!res.writableFinished) clientGone.abort();
  });
  const maxTokens = requestedMaxTokens(resolved.json);
  const sizing = { views: () => deps.registry.views(), snapshot: () => deps.registry.snapshot(), dispatcher: (node: NodeView) => deps.pools.get(node.spec), tokenizeTimeoutMs: settings.tokenizeTimeoutMs };
  const bounds = await sizePrompt(sizing, { endpoint, model: resolved.model, json: resolved.json, maxTokens, nowMs: deps.clock.now() }, clientGone.signal);
  const { upper: promptTokens, exact } = bounds;

  const policy = resolved.policy ?? settings.policy;
  const { affinityKey, promptPrefix } = requestFeaturesFor(policy, featureReaders(req.headers, endpoint, resolved.json, settings));
  const facts = { model: resolved.model, group: resolved.group, promptTokens, minPromptTokens: bounds.lower, maxTokens, policy, affinityKey, promptPrefix };
  let routeRequest: RouteRequest = routeRequestFor(facts, settings);
  const failures: string[] = [];
  let lastRefusal: UpstreamErrorMeaning | undefined;
  let loadTimedOut = false;
  for (;;) {
    const admission = await deps.scheduler.admit(routeRequest, settings, clientGone.signal, routeRequest.triedNodes.size === 0);
    if (admission.waitedMs > 0) {
      deps.events.emit('proxy:queue-wait', {
        model: deps.modelLabel(resolved.model),
        waitedMs: admission.waitedMs,
        admitted: admission.kind === 'admitted',
      });
    }
    if (admission.kind === 'refused') {
      let sites: SiteVerdicts | undefined;
      if (deps.remote !== undefined && admission.reason !== 'aborted') {
        const ask = { settings, endpoint, req, res, model: resolved.model, body: resolved.body, requestId, startedMs, finish };
        // Sites are judged by a typical size unless a tokenizer counted it: the loose byte bound would
        // turn sites away that fit, and one that does not fit refuses, which fails over to the next.
        const siteTokens = exact ? routeRequest.promptTokens : Math.min(routeRequest.promptTokens ?? 0, typicalTokens(promptText(endpoint, resolved.json)));
        const remote = await forwardToSites(deps.remote, { ...ask, promptTokens: siteTokens, maxTokens, forwarded: inbound !== undefined });
        if (remote.kind === 'answered') return;
        sites = remote.sites;
        failures.push(...remote.failures);
        lastRefusal = remote.lastRefusal ?? lastRefusal;
      }
      const refusalDeps = { events: deps.events, modelLabel: deps.modelLabel, snapshot: () => deps.registry.snapshot() };
      respondRefused(refusalDeps, { settings, admission, routeRequest, resolved, failures, lastRefusal, loadTimedOut, fail, finish, sites });
      return;
    }
    const node = admission.node.spec;
    report.node = node.name;
    let outcome: AttemptOutcome;
    try {
      outcome = await forwardAttempt({
        pool: deps.pools.get(node),
        path: nodePathPrefix(node.url) + endpoint,
        headers: upstreamRequestHeaders({
          client: req.headers,
          apiKey: node.apiKey,
          bodyBytes: resolved.body.length,
          requestId,
          clientAddress: req.socket.remoteAddress,
        }),
        body: resolved.body,
        res,
        nodeName: node.name,
        extraResponseHeaders: {
          'x-switchyard-node': node.name,
          'x-switchyard-route': `${admission.route.policy}; ${admission.route.reason}`,
          'x-request-id': requestId,
          ...truncationWarning(routeRequest, admission.node),
        },
        // Asked only on a 5xx: the tried-nodes copy is made then, not per attempt.
        canFailOver: () => deps.scheduler.hasAlternative(alsoTried(routeRequest, node.name)),
        startedMs,
        totalTimeoutMs: settings.totalTimeoutMs,
        clock: deps.clock,
        maxHeldBodyBytes: settings.maxHeldBodyBytes,
        heldBudget: deps.heldBudget,
        headersTimeoutMs: admission.load?.timeoutMs,
      });
    } finally {
      admission.release();
    }
    admission.load?.settle(loadOutcomeOf(outcome));
    const attempt = (result: ProxyEvents['proxy:attempt']['result'], status: number | undefined, error?: string): void =>
      deps.events.emit('proxy:attempt', { node: node.name, model: deps.modelLabel(resolved.model), result, status, error });
    switch (outcome.kind) {
      case 'failed':
      case 'refused': {
        const meaning = outcome.kind === 'refused' ? outcome.refusal : undefined;
        const overflow =
          meaning?.kind === 'context_overflow'
            ? judgeOverflowRefusal(overflowFacts(admission.node, routeRequest, { endpoint, json: resolved.json }, meaning))
            : undefined;
        // A refusal the gateway's own figures disprove counts against the node like a failed request.
        if (overflow?.contradiction === undefined) attempt(outcome.kind === 'refused' ? outcome.refusal.kind : outcome.result, outcome.status, outcome.error);
        else attempt('contradictory_refusal', outcome.status, `${overflow.contradiction}: ${outcome.error}`);
        failures.push(`${node.name}: ${outcome.error}`);
        loadTimedOut = outcome.kind === 'failed' && outcome.result === 'load_timeout';
        if (meaning?.kind === 'context_overflow' && overflow !== undefined) {
          if (overflow.contradiction === undefined) lastRefusal = meaning;
          // The node's context is remembered for it alone; its plausible count (never past the
          // gateway's upper bound) becomes the prompt's bounds for the remaining attempts, and a
          // refusal without a count still proves the prompt exceeds that context (overflow-refusal.ts).
          if (overflow.learnCtx !== undefined) deps.registry.learnContext(node.name, node.url, resolved.model, overflow.learnCtx);
          routeRequest = { ...routeRequest, promptTokens: overflow.promptTokens, minPromptTokens: overflow.minPromptTokens };
        } else if (meaning?.kind === 'model_not_found') {
          lastRefusal = meaning;
          deps.onModelVanished(node.name);
        }
        routeRequest = alsoTried(routeRequest, node.name);
        continue;
      }
      case 'delivered':
        attempt(outcome.status >= 500 ? 'http_5xx' : 'success', outcome.status);
        if (outcome.status === 200) learnFromAnswer(deps.registry, admission.node, { endpoint, model: resolved.model, json: resolved.json }, outcome.promptTokens);
        finish(node.name, outcome.status, { firstByteMs: outcome.firstByteMs });
        return;
      case 'broken':
        attempt('stream_error', outcome.status, outcome.error);
        finish(node.name, outcome.status, { firstByteMs: outcome.firstByteMs, brokenError: outcome.error });
        return;
      case 'client_gone':
        attempt('client_abort', outcome.status);
        finish(node.name, 499, { clientAborted: true });
        return;
    }
  }
}

/** `x-switchyard-context` when the node may have cut the prompt silently (docs/config.md, "Prompt size"). */
function truncationWarning(request: RouteRequest, node: NodeView): Record<string, string> {
  const ctx = mayTruncateAt(request, node);
  return ctx === undefined ? {} : { 'x-switchyard-context': `may-truncate; prompt ${request.minPromptTokens ?? request.promptTokens}-${request.promptTokens} tokens; context ${ctx}` };
}

/** The same request with `node` tried too. */
function alsoTried(request: RouteRequest, node: string): RouteRequest {
  return { ...request, triedNodes: new Set(request.triedNodes).add(node) };
}
