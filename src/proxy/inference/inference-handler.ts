// One inference request, as a spine of named steps: settings → body → model → gates → size →
// failover over the sources → answer → report. The caller's gates are judged where what they read
// is known: the bytes, the model, then the sized prompt before admission. Every step is the same
// for every request; what an optional feature adds comes in through the seam
// (../feature/request-feature.ts): the caller's gates (a forward's signed body, a tenant's scope
// and limits), the later target sources (the remote sites), the start hook (a span). A request
// whose caller has no gates, on a plane with no feature, runs nothing else.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '#src/core/errors.ts';
import type { InferenceEndpoint } from '#src/config/index.ts';
import { routeRequestFor } from '#src/scheduler/index.ts';
import { readBody } from '../http/read-body.ts';
import { runFailover, type TargetSource } from '../failover/failover-loop.ts';
import { startFailover } from '../failover/failover-state.ts';
import { NodeTargets } from '../failover/node-target.ts';
import { OPEN_CALLER, type Caller } from '../feature/request-feature.ts';
import type { InferenceDeps } from './inference-deps.ts';
import { judgeAdmission, judgeBody, judgeModel } from '../feature/request-gates.ts';
import { answerAsUnknown, UNKNOWN_TO_CALLER } from './unknown-answer.ts';
import {
  answerUnserved,
  attemptSetting,
  bodyRefused,
  failFor,
  noteModel,
  reportFor,
  requestOf,
  resolveModel,
  routeFacts,
  sizeRequest,
} from './inference-steps.ts';

/** `caller`: whom the route wrappers decided the request is served as (OPEN_CALLER: no client keys, no forward). */
export async function handleInference(
  deps: InferenceDeps,
  endpoint: InferenceEndpoint,
  req: IncomingMessage,
  res: ServerResponse,
  caller: Caller = OPEN_CALLER,
): Promise<void> {
  const report = reportFor(deps, endpoint, req, caller);
  // One async frame for the whole request: every layer below that awaits costs a promise and a turn.
  try {
    // settings: one snapshot for the whole request. A refusal answers through `fail`, built only then.
    const settings = deps.settings();
    const fail = (): ReturnType<typeof failFor> => failFor(res, report, endpoint);
    // body: bounded; then the gates that judge the bytes (a forward's signed digest).
    let raw: Buffer;
    const seen = { bytes: 0 };
    try {
      raw = await readBody(req, settings.maxRequestBodyBytes, seen);
    } catch (error) {
      report.bytesIn = seen.bytes;
      return bodyRefused(req, res, settings, error, fail());
    }
    report.bytesIn = raw.length;
    const badBody = judgeBody(caller.gates, raw, req);
    if (badBody !== undefined) return fail()(badBody.error, badBody.headers);
    // model: resolved from the body (a multipart form's field is read asynchronously).
    const resolving = resolveModel(deps, endpoint, req, raw, settings);
    const resolved = resolving instanceof Promise ? await resolving : resolving;
    if (resolved instanceof GatewayError) return fail()(resolved);
    noteModel(report, endpoint, resolved, settings);
    // gates on the model: pass, refuse, or answer it as a model no node serves (a tenant's scope).
    const scoped = judgeModel(caller.gates, resolved.model);
    if (scoped?.kind === 'refused') return fail()(scoped.error, scoped.headers);
    // size: at once unless a node's tokenizer is asked; a hidden model is sized as the unknown name it is routed as.
    const request = requestOf(endpoint, res, resolved, settings);
    const sizing = sizeRequest(deps, request, scoped === undefined ? resolved.model : UNKNOWN_TO_CALLER);
    const bounds = sizing instanceof Promise ? await sizing : sizing;
    const routeRequest = routeRequestFor(routeFacts(req, request, bounds, caller), settings, endpoint);
    const ask = { settings, endpoint, req, resolved, requestId: report.requestId, signal: request.signal };
    const sourceAsk = { ...ask, caller, maxTokens: request.maxTokens, exactCount: bounds?.exact ?? false };
    // answer: a gate hid the model (a tenant's scope): refused exactly as an unknown model, sent nowhere.
    if (scoped !== undefined)
      return await answerAsUnknown(deps, { routeRequest, ask: sourceAsk, verdict: scoped, fail: fail(), report });
    // gates before admission: a tenant's limits, a forward's one use (a promise only for a gate that waits).
    const judging = judgeAdmission(caller.gates, { ...request, promptTokens: bounds?.upper }, res, report);
    const refused = judging instanceof Promise ? await judging : judging;
    if (refused !== undefined) return fail()(refused.error, refused.headers);
    // failover over the sources: the local nodes the scheduler admits, then the features' (the remote sites).
    const watched = { ...ask, onQueueWait: (ms: number) => void (report.queueWaitMs += ms), observer: report.observer };
    const nodes = new NodeTargets(deps, watched);
    const later = deps.hooks.sources.map((source) => source({ ...sourceAsk, observer: report.observer }));
    const sources: readonly TargetSource[] = later.length === 0 ? [nodes] : [nodes, ...later];
    const end = await runFailover(sources, attemptSetting(deps, res, resolved, settings, report), startFailover(routeRequest));
    // answer: served already, or refused by the one refusal renderer with what every source said.
    if (end.kind === 'unserved') answerUnserved(deps, { nodes, later, end, resolved, settings, caller, fail: fail(), report });
  } catch (error) {
    // report: the server's dispatcher answers an internal error 500 (or cuts a response already
    // started); it is still a request, and must show in gateway_requests_total. Every other end
    // reported itself (report.finish runs once).
    report.finish(report.node, 500);
    throw error;
  }
}
