// The gateway's endpoint table: the OpenAI routes, /health, /metrics and the admin routes.
// Built once per gateway by the composition root; handlers read the current config on each call.

import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Clock } from '#src/core/clock.ts';
import { GatewayError } from '#src/core/errors.ts';
import type { GatewayConfig, ConfigProblem } from '#src/config/types.ts';
import type { NodeRegistry } from '#src/nodes/index.ts';
import {
  fleetModels,
  handleInference,
  sendError,
  sendJson,
  type EndpointTable,
  type Handler,
  type InferenceDeps,
} from '#src/proxy/index.ts';
import type { GatewayMetrics } from '#src/metrics/prometheus.ts';
import { healthReport } from './health-report.ts';
import { hostsView } from './hosts-view.ts';
import { explainRouting } from './explain.ts';
import { badRequest } from '#src/core/errors.ts';

export interface EndpointDeps {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly config: () => GatewayConfig;
  readonly registry: NodeRegistry;
  readonly metrics: GatewayMetrics;
  readonly inference: InferenceDeps;
  readonly reload: () => Promise<{ ok: true } | { ok: false; problems: readonly ConfigProblem[] }>;
}

export const INFERENCE_PATHS = ['/v1/chat/completions', '/v1/completions', '/v1/embeddings', '/v1/responses'] as const;

export function buildEndpoints(deps: EndpointDeps): EndpointTable {
  const table = new Map<string, Map<string, Handler>>();
  const add = (method: string, path: string, handler: Handler): void => {
    const byMethod = table.get(path) ?? new Map<string, Handler>();
    byMethod.set(method, handler);
    table.set(path, byMethod);
  };

  for (const path of INFERENCE_PATHS) {
    add('POST', path, (req, res) => handleInference(deps.inference, path, req, res));
  }
  add('GET', '/v1/models', (_req, res) => {
    sendJson(res, 200, fleetModels(deps.registry.views(), deps.config().models.available, deps.clock.now()));
  });
  add('GET', '/health', (_req, res) => {
    const report = healthReport(deps.registry.views(), deps.clock.now());
    sendJson(res, report.status === 'down' ? 503 : 200, report);
  });
  add('GET', '/metrics', async (_req, res) => {
    const text = await deps.metrics.text();
    res.writeHead(200, { 'content-type': deps.metrics.contentType(), 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
  add('GET', '/admin/hosts', (_req, res) => {
    const snapshot = deps.registry.snapshot();
    sendJson(
      res,
      200,
      hostsView({
        views: snapshot.nodes,
        inFlight: (node) => snapshot.inFlight(node),
        usage: (node, model) => snapshot.usage(node, model),
        queueDepths: deps.inference.admission.queue.depths(),
      }),
    );
  });
  add('GET', '/admin/explain', (_req, res, url) => {
    const query = readExplainQuery(url, deps.inference.catalog().aliases);
    if ('error' in query) {
      sendError(res, badRequest(query.error, query.param));
      return;
    }
    const routing = deps.config().routing;
    const explanation = explainRouting(
      {
        model: query.model,
        group: deps.inference.catalog().groups.get(query.model),
        triedNodes: new Set(),
        promptTokens: query.promptTokens,
        maxTokens: query.maxTokens,
        completionReserveTokens: routing.completionReserveTokens,
        loadOnDemand: routing.loadOnDemand,
      },
      deps.registry.snapshot(),
      deps.inference.admission.filters,
    );
    sendJson(res, 200, explanation);
  });
  add('POST', '/admin/reload', async (req, res) => {
    req.resume();
    if (!isLoopback(req)) {
      sendError(res, forbidden('admin mutations are accepted only from loopback'));
      return;
    }
    const outcome = await deps.reload();
    if (outcome.ok) sendJson(res, 200, { status: 'reloaded' });
    else sendJson(res, 400, { status: 'rejected', problems: outcome.problems.map((p) => `${p.path}: ${p.message}`) });
  });
  return table;
}

type ExplainQuery =
  | { readonly model: string; readonly promptTokens: number | undefined; readonly maxTokens: number | undefined }
  | { readonly error: string; readonly param: string };

function readExplainQuery(url: URL, aliases: ReadonlyMap<string, string>): ExplainQuery {
  const asked = url.searchParams.get('model');
  if (!asked) return { error: 'the model query parameter is required, e.g. /admin/explain?model=llama&prompt_tokens=5000', param: 'model' };
  const count = (name: string): number | undefined | 'bad' => {
    const text = url.searchParams.get(name);
    if (text === null || text === '') return undefined;
    const value = Number(text);
    return Number.isInteger(value) && value >= 0 ? value : 'bad';
  };
  const promptTokens = count('prompt_tokens');
  if (promptTokens === 'bad') return { error: 'prompt_tokens must be a whole number of tokens', param: 'prompt_tokens' };
  const maxTokens = count('max_tokens');
  if (maxTokens === 'bad') return { error: 'max_tokens must be a whole number of tokens', param: 'max_tokens' };
  return { model: aliases.get(asked) ?? asked, promptTokens, maxTokens };
}

function isLoopback(req: IncomingMessage): boolean {
  const address = req.socket.remoteAddress ?? '';
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

function forbidden(message: string): GatewayError {
  return new GatewayError('GW_UNAUTHORIZED', message, { status: 403, openaiType: 'authentication_error', openaiCode: 'forbidden' });
}
