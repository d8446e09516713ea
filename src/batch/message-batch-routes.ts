// Anthropic's Message Batches API on the inference listener (batch-routes.ts lays them with the
// Files and Batch API's): keyed routes (the tenant's key in `x-api-key` or as a Bearer token, as
// on every route), each answer or error in Anthropic's shape (`{"type":"error","error":{type,message}}`).

import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { GatewayError, routeNotFound } from '#src/core/errors.ts';
import type { TargetUrl } from '#src/core/request-target.ts';
import { DEFAULT_TENANT } from '#src/core/tenant-class.ts';
import { ANTHROPIC_ERRORS, readBody, sendError, type Caller, type FeatureRoute } from '#src/proxy/index.ts';
import { sendApiAnswer } from './api-answer.ts';
import type { BatchPort } from './batch-port.ts';
import { invalidRequest } from './message-batch-shapes.ts';
import type { MessageBatches } from './message-batches.ts';

const PATH = '/v1/messages/batches';

/** The origin the client called (its Host, and the scheme it used or a proxy in front says): where `results_url` points. */
export function requestOrigin(req: IncomingMessage): string {
  const host = req.headers.host;
  if (host === undefined || host === '' || /[\s/\\@]/.test(host)) return '';
  const forwarded = String(req.headers['x-forwarded-proto'] ?? '')
    .split(',')[0]
    ?.trim()
    .toLowerCase();
  const scheme =
    forwarded === 'https' || forwarded === 'http' ? forwarded : (req.socket as TLSSocket).encrypted === true ? 'https' : 'http';
  return `${scheme}://${host}`;
}

type Op = (
  api: MessageBatches,
  ask: { tenant: string; req: IncomingMessage; id: string | undefined; rest: readonly string[]; url: TargetUrl },
) => unknown;

function route(port: BatchPort, op: Op): FeatureRoute['route'] {
  return async (req, res, url, caller: Caller | undefined) => {
    const served = port.served();
    if (served instanceof GatewayError) {
      req.resume();
      return sendError(res, served, {}, ANTHROPIC_ERRORS);
    }
    const rest = url.pathname
      .slice(PATH.length)
      .split('/')
      .filter((part) => part !== '');
    const tenant = caller?.labels.tenant ?? DEFAULT_TENANT;
    const answer = await op(served.messages, { tenant, req, id: rest[0], rest, url });
    return sendApiAnswer(res, answer, ANTHROPIC_ERRORS);
  };
}

/** The create body: JSON up to [batch] max_file_bytes (the requests are given inline). */
async function createBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  let raw: Buffer;
  try {
    raw = await readBody(req, maxBytes);
  } catch (error) {
    return error instanceof GatewayError ? error : invalidRequest(`the body could not be read: ${String(error)}`);
  }
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    return invalidRequest('the body must be JSON: {"requests": [{"custom_id", "params"}]}');
  }
}

export function messageBatchRoutes(port: BatchPort): readonly FeatureRoute[] {
  const missing = (req: IncomingMessage, url: TargetUrl): GatewayError => routeNotFound(req.method ?? 'GET', url.pathname);
  return [
    {
      method: 'POST',
      path: PATH,
      keyed: true,
      route: route(port, async (api, { tenant, req }) => {
        const body = await createBody(req, api.maxBodyBytes());
        return body instanceof GatewayError ? body : api.create(tenant, body, requestOrigin(req));
      }),
    },
    {
      method: 'GET',
      path: PATH,
      keyed: true,
      route: route(port, (api, { tenant, req, url }) => api.list(tenant, url.searchParams, requestOrigin(req))),
    },
    {
      method: 'GET',
      path: `${PATH}/*`,
      keyed: true,
      route: route(port, (api, { tenant, req, id, rest, url }) => {
        if (id !== undefined && rest.length === 1) return api.retrieve(tenant, id, requestOrigin(req));
        if (id !== undefined && rest.length === 2 && rest[1] === 'results') return api.results(tenant, id);
        return missing(req, url);
      }),
    },
    {
      method: 'POST',
      path: `${PATH}/*`,
      keyed: true,
      route: route(port, (api, { tenant, req, id, rest, url }) => {
        req.resume();
        return id !== undefined && rest.length === 2 && rest[1] === 'cancel'
          ? api.cancel(tenant, id, requestOrigin(req))
          : missing(req, url);
      }),
    },
    {
      method: 'DELETE',
      path: `${PATH}/*`,
      keyed: true,
      route: route(port, (api, { tenant, req, id, rest, url }) => {
        req.resume();
        return id !== undefined && rest.length === 1 ? api.delete(tenant, id) : missing(req, url);
      }),
    },
  ];
}
