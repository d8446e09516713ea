// The batch feature's half on the request plane (the seam's `routes`,
// proxy/feature/request-feature.ts): the Files and Batch API on the inference listener, each route
// keyed (the caller the client keys decide; its tenant owns what it creates and sees only that),
// and the runner's line route, unkeyed: a request signed with the process's secret (line-sender.ts)
// is served through the whole request path as its job's tenant at the `batch` class. A plain
// inference request runs none of this (these are other paths of the table).

import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { GatewayError, routeNotFound, badRequest } from '#src/core/errors.ts';
import { SQLITE, sqliteCode } from '#src/state/index.ts';
import type { TargetUrl } from '#src/core/request-target.ts';
import type { InferenceEndpoint } from '#src/config/index.ts';
import { DEFAULT_TENANT } from '#src/core/tenant-class.ts';
import {
  readBody,
  sendError,
  type Caller,
  type FeatureRoute,
  type RequestFeature,
  type ServeInference,
} from '#src/proxy/index.ts';
import type { BatchApi } from './batch-api.ts';
import { isBatchEndpoint } from './batch-line.ts';
import type { BatchPort } from './batch-port.ts';
import { JOB_HEADER, LINE_PATH, SECRET_HEADER } from './line-sender.ts';
import { messageBatchRoutes } from './message-batch-routes.ts';
import { sendApiAnswer } from './api-answer.ts';

/** The largest POST /v1/batches body read. */
const MAX_CREATE_BYTES = 64 * 1024;

/** A tenant's caller by name (the tenants' callers; the open caller for `default` without client keys); undefined = no such tenant now. */
export type TenantCallerOf = (tenant: string) => Caller | undefined;

export function batchRequests(port: BatchPort, callerOf: TenantCallerOf): RequestFeature {
  return { routes: (deps) => batchRoutes(port, callerOf, deps.serve) };
}

const tenantOf = (caller: Caller | undefined): string => caller?.labels.tenant ?? DEFAULT_TENANT;

/**
 * A write that waited past the file's busy timeout for another connection's (with request workers:
 * another thread writing a large job's lines; with [batch] shared_dir: another replica): nothing
 * was changed, so the client may simply try again.
 */
const busy = (): GatewayError =>
  new GatewayError('GW_NO_AVAILABLE_NODE', 'The batch file is busy with another write (a large job being created); try again.', {
    status: 503,
    openaiType: 'server_error',
    openaiCode: 'batch_busy',
    retryAfterSeconds: 1,
  });

/** The API for `caller`, answered as JSON (or the error that says why not). */
function api(
  port: BatchPort,
  run: (api: BatchApi, tenant: string, req: IncomingMessage, rest: string[], url: TargetUrl) => unknown,
): FeatureRoute['route'] {
  return async (req, res, url, caller) => {
    const served = port.served();
    if (served instanceof GatewayError) {
      req.resume();
      return sendError(res, served);
    }
    const rest = url.pathname
      .split('/')
      .slice(3)
      .filter((part) => part !== '');
    let answer: unknown;
    try {
      answer = await run(served, tenantOf(caller), req, rest, url);
    } catch (error) {
      if (sqliteCode(error) !== SQLITE.BUSY) throw error;
      answer = busy();
    }
    return sendApiAnswer(res, answer);
  };
}

async function jsonBody(req: IncomingMessage): Promise<unknown> {
  const raw = await readBody(req, MAX_CREATE_BYTES);
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    return badRequest('the body must be JSON');
  }
}

function batchRoutes(port: BatchPort, callerOf: TenantCallerOf, serve: ServeInference): readonly FeatureRoute[] {
  const one = (rest: string[], suffix: string | undefined): string | undefined =>
    rest.length === (suffix === undefined ? 1 : 2) && (suffix === undefined || rest[1] === suffix) ? rest[0] : undefined;
  const missing = (req: IncomingMessage, url: TargetUrl): GatewayError => routeNotFound(req.method ?? 'GET', url.pathname);
  return [
    { method: 'POST', path: '/v1/files', keyed: true, route: api(port, (a, tenant, req) => a.upload(tenant, req)) },
    {
      method: 'GET',
      path: '/v1/files',
      keyed: true,
      route: api(port, (a, tenant, _req, _rest, url) => a.listFiles(tenant, url.searchParams)),
    },
    {
      method: 'GET',
      path: '/v1/files/*',
      keyed: true,
      route: api(port, (a, tenant, req, rest, url) => {
        const id = one(rest, undefined);
        const content = one(rest, 'content');
        if (id !== undefined) return a.file(tenant, id);
        return content === undefined ? missing(req, url) : a.content(tenant, content);
      }),
    },
    {
      method: 'DELETE',
      path: '/v1/files/*',
      keyed: true,
      route: api(port, (a, tenant, req, rest, url) => {
        const id = one(rest, undefined);
        return id === undefined ? missing(req, url) : a.deleteFile(tenant, id);
      }),
    },
    {
      method: 'POST',
      path: '/v1/batches',
      keyed: true,
      route: api(port, async (a, tenant, req) => {
        const body = await jsonBody(req);
        return body instanceof GatewayError ? body : a.createBatch(tenant, body);
      }),
    },
    {
      method: 'GET',
      path: '/v1/batches',
      keyed: true,
      route: api(port, (a, tenant, _req, _rest, url) => a.listBatches(tenant, url.searchParams)),
    },
    {
      method: 'GET',
      path: '/v1/batches/*',
      keyed: true,
      route: api(port, (a, tenant, req, rest, url) => {
        const id = one(rest, undefined);
        return id === undefined ? missing(req, url) : a.batch(tenant, id);
      }),
    },
    {
      method: 'POST',
      path: '/v1/batches/*',
      keyed: true,
      route: api(port, (a, tenant, req, rest, url) => {
        req.resume();
        const id = one(rest, 'cancel');
        return id === undefined ? missing(req, url) : a.cancel(tenant, id);
      }),
    },
    ...messageBatchRoutes(port),
    { method: 'POST', path: `${LINE_PATH}/*`, keyed: false, route: lineRoute(port, callerOf, serve) },
  ];
}

/** The runner's line: checked to be the runner's (else answered as a path that does not exist), served as its job's tenant at the `batch` class. */
function lineRoute(port: BatchPort, callerOf: TenantCallerOf, serve: ServeInference): FeatureRoute['route'] {
  const secret = Buffer.from(port.secret);
  return (req, res, url) => {
    const presented = Buffer.from(String(req.headers[SECRET_HEADER] ?? ''));
    const job = port.job(String(req.headers[JOB_HEADER] ?? ''));
    if (
      secret.length === 0 ||
      presented.length !== secret.length ||
      !timingSafeEqual(presented, secret) ||
      job === undefined ||
      !isBatchEndpoint(job.endpoint)
    ) {
      req.resume();
      return sendError(res, routeNotFound(req.method ?? 'POST', url.pathname));
    }
    // The runner's secret stops here: the line goes on to a node with the rest of its headers.
    delete req.headers[SECRET_HEADER];
    const caller = callerOf(job.tenant);
    if (caller === undefined) {
      req.resume();
      return sendError(
        res,
        new GatewayError('GW_FORBIDDEN', `the batch's tenant '${job.tenant}' is no longer configured`, {
          status: 403,
          openaiType: 'invalid_request_error',
          openaiCode: 'tenant_removed',
        }),
      );
    }
    return serve(job.endpoint as InferenceEndpoint, req, res, { ...caller, queue: { ...caller.queue, priority: 'batch' } });
  };
}
