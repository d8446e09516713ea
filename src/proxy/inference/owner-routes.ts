// The routes that name an answer rather than a model (config/owned-routes.ts): `GET`/`DELETE
// /v1/responses/{id}`, `GET /v1/responses/{id}/input_items` and `POST /v1/chat/completions/control`
// (`{id, action, model}`). Each goes to the node that produced (or is producing) that answer for the
// caller's tenant — the one memory of owners (routing/policies/sessions.ts) — and the node's answer
// is passed on as it came. No owner known for this tenant (never seen, forgotten, another tenant's,
// its node gone): 404 in OpenAI's shape, the same for another tenant's id as for an unknown one.
// Bounded: the client's body (64 KiB), the exchange's time and the answer's bytes.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestBoundedText } from '#src/core/bounded-text.ts';
import { badRequest, GatewayError } from '#src/core/errors.ts';
import { isRecord } from '#src/core/is-record.ts';
import type { AnswerOwner, FleetView } from '#src/ports/index.ts';
import type { UpstreamPools } from '../attempt/upstream-pools.ts';
import { upstreamRequestHeaders } from '../http/hop-headers.ts';
import { sendError } from '../http/openai-error.ts';
import { readBody } from '../http/read-body.ts';
import type { Caller } from '../feature/request-feature.ts';

/** The most of a control body read (it is `{id, action, model}`). */
export const OWNED_BODY_MAX_BYTES = 64 * 1024;
/** The most of a node's answer passed on (a stored response with its output). */
export const OWNED_ANSWER_MAX_BYTES = 16 * 1024 * 1024;
/** The whole exchange with the owner. */
export const OWNED_EXCHANGE_TIMEOUT_MS = 30_000;

export interface OwnerRouteDeps {
  readonly fleet: Pick<FleetView, 'view'>;
  readonly pools: Pick<UpstreamPools, 'get'>;
  /** In-thread the policies' table; in a worker a round trip to the owner thread. */
  readonly answerOwner: AnswerOwner | undefined;
  readonly newRequestId: () => string;
}

/** Pure: the 404 for an answer id no node is known to hold for this caller. */
export function unknownAnswer(id: string): GatewayError {
  return new GatewayError('GW_NOT_FOUND', `No response or completion with id '${id}' is known to this gateway.`, {
    status: 404,
    openaiType: 'invalid_request_error',
    param: 'id',
    openaiCode: 'not_found',
  });
}

/** Pure: the id a control body names, or the 400 for a body that names none. */
export function controlIdOf(body: Buffer): string | GatewayError {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return badRequest('the body is not JSON');
  }
  if (!isRecord(json) || typeof json.id !== 'string' || json.id === '') return badRequest('missing completion id', 'id');
  return json.id;
}

/** Sends the request to the owner of `id` for `caller`'s tenant, and its answer to the client. */
export async function forwardToOwner(
  deps: OwnerRouteDeps,
  req: IncomingMessage,
  res: ServerResponse,
  target: { readonly id: string; readonly pathAndQuery: string; readonly body: Buffer | undefined },
  caller: Caller,
): Promise<void> {
  const ownerName = await deps.answerOwner?.(caller.queue.name, target.id);
  const node = ownerName === undefined ? undefined : deps.fleet.view(ownerName);
  if (node === undefined) return sendError(res, unknownAnswer(target.id));
  const method = req.method === 'DELETE' ? 'DELETE' : req.method === 'POST' ? 'POST' : 'GET';
  const headers = upstreamRequestHeaders({
    client: req.headers,
    apiKey: node.spec.apiKey,
    bodyBytes: target.body?.length ?? 0,
    requestId: deps.newRequestId(),
    clientAddress: req.socket.remoteAddress,
  });
  const answer = await requestBoundedText(`${node.spec.url}${target.pathAndQuery}`, {
    dispatcher: deps.pools.get(node.spec),
    method,
    headers,
    body: target.body?.toString('utf8'),
    timeoutMs: OWNED_EXCHANGE_TIMEOUT_MS,
    maxBytes: OWNED_ANSWER_MAX_BYTES,
  });
  if (!answer.ok) {
    const error = new GatewayError(
      'GW_UPSTREAM_UNREACHABLE',
      `node ${node.spec.name} (the owner of '${target.id}'): ${answer.error}`,
      {
        status: 502,
        openaiType: 'server_error',
        openaiCode: 'upstream_error',
      },
    );
    return sendError(res, error, { 'x-switchyard-node': node.spec.name });
  }
  if (res.headersSent || res.destroyed) return;
  res.writeHead(answer.status, {
    'content-type': looksJson(answer.text) ? 'application/json' : 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(answer.text),
    'x-switchyard-node': node.spec.name,
  });
  res.end(answer.text);
}

/** Reads a control body (bounded), then forwards it to the owner of its `id`. */
export async function forwardControl(
  deps: OwnerRouteDeps,
  req: IncomingMessage,
  res: ServerResponse,
  caller: Caller,
): Promise<void> {
  const body = await readBody(req, OWNED_BODY_MAX_BYTES);
  const id = controlIdOf(body);
  if (id instanceof GatewayError) return sendError(res, id);
  return forwardToOwner(deps, req, res, { id, pathAndQuery: new URL(req.url ?? '/', 'http://x').pathname, body }, caller);
}

function looksJson(text: string): boolean {
  const first = text.trimStart()[0];
  return first === '{' || first === '[';
}
