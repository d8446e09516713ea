// The gateway's endpoint tables: the public one (OpenAI routes, /health) and the admin one
// (/admin/*, /metrics, /health). Without [admin] listen both are served on the main listener (the
// admin table's /health wins); with it the admin table moves to its own listener. /health answers
// everyone with the fleet status; the detailed report only on a listener that serves the admin
// table, to a caller who passes the admin read check. Handlers read the current config on each call.

import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Clock } from '#src/core/clock.ts';
import { GatewayError } from '#src/core/errors.ts';
import type { GatewayConfig } from '#src/config/types.ts';
import type { NodeRegistry } from '#src/nodes/index.ts';
import { fleetModels, handleInference, sendError, sendJson, type EndpointTable, type Handler, type InferenceDeps } from '#src/proxy/index.ts';
import type { GatewayMetrics } from '#src/metrics/prometheus.ts';
import { fleetStatus, healthHttpStatus, healthReport } from './health-report.ts';
import { adminRoutes, type AdminCommands } from './admin-routes.ts';
import { isLoopbackAddress, keyChecker, presentedKey, type KeyCheck } from './auth.ts';
import { adminAccess, cameThroughProxy, type AdminAccess } from './admin-access.ts';

export interface EndpointDeps {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly config: () => GatewayConfig;
  readonly registry: NodeRegistry;
  readonly metrics: GatewayMetrics;
  readonly inference: InferenceDeps;
  readonly commands: AdminCommands;
}

export const INFERENCE_PATHS = ['/v1/chat/completions', '/v1/completions', '/v1/embeddings', '/v1/responses'] as const;

export interface EndpointTables {
  readonly public: EndpointTable;
  readonly admin: EndpointTable;
}

export class TableBuilder {
  readonly table = new Map<string, Map<string, Handler>>();

  add(method: string, path: string, handler: Handler): void {
    const byMethod = this.table.get(path) ?? new Map<string, Handler>();
    byMethod.set(method, handler);
    this.table.set(path, byMethod);
  }
}

/** Keys are re-read from the config on every request, so a reload can rotate them. */
function cachedChecker(keys: () => readonly string[]): (presented: string | undefined) => boolean {
  let last: { keys: readonly string[]; check: KeyCheck } | undefined;
  return (presented) => {
    const current = keys();
    if (last?.keys !== current) last = { keys: current, check: keyChecker(current) };
    return last.check(presented);
  };
}

export function unauthorized(message: string): GatewayError {
  return new GatewayError('GW_UNAUTHORIZED', message, { status: 401, openaiType: 'authentication_error', openaiCode: 'invalid_api_key' });
}

export function forbidden(message: string): GatewayError {
  return new GatewayError('GW_UNAUTHORIZED', message, { status: 403, openaiType: 'authentication_error', openaiCode: 'forbidden' });
}

export function buildEndpoints(deps: EndpointDeps): EndpointTables {
  const clientKeyOk = cachedChecker(() => deps.config().server.apiKeys);
  const requireClientKey =
    (handler: Handler): Handler =>
    (req, res, url) => {
      if (deps.config().server.apiKeys.length > 0 && !clientKeyOk(presentedKey(req.headers))) {
        req.resume();
        sendError(res, unauthorized('Incorrect or missing API key. Send it as "Authorization: Bearer <key>".'));
        return;
      }
      return handler(req, res, url);
    };

  const publicTable = new TableBuilder();
  for (const path of INFERENCE_PATHS) {
    publicTable.add('POST', path, requireClientKey((req, res) => handleInference(deps.inference, path, req, res)));
  }
  publicTable.add(
    'GET',
    '/v1/models',
    requireClientKey((_req, res) => {
      sendJson(res, 200, fleetModels(deps.registry.views(), deps.config().models.available, deps.clock.now()));
    }),
  );
  // /health stays open: load balancers and orchestrators probe it without credentials.
  publicTable.add('GET', '/health', (_req, res) => {
    const status = fleetStatus(deps.registry.freshViews());
    sendJson(res, healthHttpStatus(status), { status });
  });

  const adminTokenOk = cachedChecker(() => {
    const token = deps.config().admin.token;
    return token === undefined ? [] : [token];
  });
  const accessOf = (req: IncomingMessage, mutation: boolean): AdminAccess =>
    adminAccess({
      tokenSet: deps.config().admin.token !== undefined,
      tokenMatches: adminTokenOk(presentedKey(req.headers)),
      mutation,
      fromLoopback: isLoopbackAddress(req.socket.remoteAddress),
      viaProxy: cameThroughProxy(req.headers),
    });
  const guard = (mutation: boolean, handler: Handler): Handler => (req, res, url) => {
    const access = accessOf(req, mutation);
    if (access.allowed) return handler(req, res, url);
    req.resume();
    sendError(res, access.status === 401 ? unauthorized(access.message) : forbidden(access.message));
  };
  const adminTable = new TableBuilder();
  // Never refused (a probe may carry any header): without admin rights it is the public answer.
  adminTable.add('GET', '/health', (req, res) => {
    const report = healthReport(deps.registry.freshViews(), deps.clock.now());
    const detailed = accessOf(req, false).allowed;
    sendJson(res, healthHttpStatus(report.status), detailed ? report : { status: report.status });
  });
  adminTable.add(
    'GET',
    '/metrics',
    guard(false, async (_req, res) => {
      const text = await deps.metrics.text();
      res.writeHead(200, { 'content-type': deps.metrics.contentType(), 'content-length': Buffer.byteLength(text) });
      res.end(text);
    }),
  );
  adminRoutes(adminTable, deps, guard);
  return { public: publicTable.table, admin: adminTable.table };
}
