// One inference request: read the body → resolve the model → route → forward, failing over to
// another node while nothing has reached the client → report what happened.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import { GatewayError } from '#src/core/errors.ts';
import type { NodeRegistry } from '#src/nodes/index.ts';
import { route, type Filter, type RouteRequest, type SelectionPolicy } from '#src/routing/index.ts';
import { forwardAttempt } from './forward.ts';
import { upstreamRequestHeaders } from './hop-headers.ts';
import { allAttemptsFailed, noNodeAvailable } from './no-node-error.ts';
import { sendError, toGatewayError } from './openai-error.ts';
import type { ProxyEvents } from './proxy-events.ts';
import { readBody } from './read-body.ts';
import { resolveRequest, type ModelCatalog } from './request-model.ts';
import type { UpstreamPools } from './upstream-pools.ts';

export interface InferenceDeps {
  readonly clock: Clock;
  readonly registry: NodeRegistry;
  readonly pools: UpstreamPools;
  readonly filters: readonly Filter[];
  readonly policy: SelectionPolicy;
  readonly events: EventBus<ProxyEvents>;
  readonly catalog: () => ModelCatalog;
  readonly maxRequestBodyBytes: () => number;
  readonly retryAfterSeconds: () => number;
  /** A bounded metrics label for a model id. */
  readonly modelLabel: (model: string) => string;
  /** Refresh-on-miss: called once when nothing can serve the model; resolves when worth re-routing. */
  readonly onModelMiss: (req: RouteRequest) => Promise<boolean>;
  readonly newRequestId: () => string;
}

export async function handleInference(
  deps: InferenceDeps,
  endpoint: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const startedMs = deps.clock.monotonicMs();
  const requestId = deps.newRequestId();
  const finish = (model: string, node: string | undefined, status: number, extra: Partial<ProxyEvents['proxy:request-finished']> = {}): void => {
    deps.events.emit('proxy:request-finished', {
      endpoint,
      model: deps.modelLabel(model),
      node,
      status,
      durationMs: deps.clock.monotonicMs() - startedMs,
      firstByteMs: undefined,
      brokenError: undefined,
      clientAborted: false,
      ...extra,
    });
  };
  const fail = (model: string, error: GatewayError): void => {
    sendError(res, error, { 'x-request-id': requestId });
    finish(model, undefined, error.status);
  };

  let raw: Buffer;
  try {
    raw = await readBody(req, deps.maxRequestBodyBytes());
  } catch (error) {
    const gatewayError = toGatewayError(error);
    if (gatewayError.status === 413) res.setHeader('connection', 'close');
    fail('', gatewayError);
    return;
  }
  const resolved = resolveRequest(raw, deps.catalog());
  if (resolved instanceof GatewayError) {
    fail('', resolved);
    return;
  }

  const tried = new Set<string>();
  const failures: string[] = [];
  let askedForMiss = false;
  for (;;) {
    const routeRequest: RouteRequest = { model: resolved.model, group: resolved.group, triedNodes: tried };
    let decision = route(routeRequest, deps.registry.snapshot(), deps.filters, deps.policy);
    if (tried.size === 0) deps.events.emit('route:excluded', { model: deps.modelLabel(resolved.model), excluded: decision.excluded });
    if (decision.kind === 'unroutable' && tried.size === 0 && !askedForMiss) {
      askedForMiss = true;
      if (await deps.onModelMiss(routeRequest)) {
        decision = route(routeRequest, deps.registry.snapshot(), deps.filters, deps.policy);
      }
    }
    if (decision.kind === 'unroutable') {
      const error =
        tried.size === 0
          ? noNodeAvailable(resolved.requestedModel, decision.excluded, deps.retryAfterSeconds())
          : allAttemptsFailed(resolved.requestedModel, failures, deps.retryAfterSeconds());
      fail(resolved.model, error);
      return;
    }
    const node = decision.node.spec;
    const lease = deps.registry.lease(node.name);
    const nextTried = new Set([...tried, node.name]);
    let outcome;
    try {
      outcome = await forwardAttempt({
        pool: deps.pools.get(node),
        path: endpoint,
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
        extraResponseHeaders: { 'x-switchyard-node': node.name, 'x-request-id': requestId },
        canFailOver: () =>
          route({ ...routeRequest, triedNodes: nextTried }, deps.registry.snapshot(), deps.filters, deps.policy).kind ===
          'selected',
        monotonicMs: () => deps.clock.monotonicMs(),
        startedMs,
      });
    } finally {
      lease?.release();
    }
    const attempt = (result: ProxyEvents['proxy:attempt']['result'], status: number | undefined, error?: string): void =>
      deps.events.emit('proxy:attempt', { node: node.name, model: deps.modelLabel(resolved.model), result, status, error });
    switch (outcome.kind) {
      case 'failed':
        attempt(outcome.result, outcome.status, outcome.error);
        failures.push(`${node.name}: ${outcome.error}`);
        tried.add(node.name);
        continue;
      case 'delivered':
        attempt(outcome.status >= 500 ? 'http_5xx' : 'success', outcome.status);
        finish(resolved.model, node.name, outcome.status, { firstByteMs: outcome.firstByteMs });
        return;
      case 'broken':
        attempt('stream_error', outcome.status, outcome.error);
        finish(resolved.model, node.name, outcome.status, { firstByteMs: outcome.firstByteMs, brokenError: outcome.error });
        return;
      case 'client_gone':
        attempt('client_abort', outcome.status);
        finish(resolved.model, node.name, 499, { clientAborted: true });
        return;
    }
  }
}
