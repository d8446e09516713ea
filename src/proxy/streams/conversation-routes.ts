// The resumable-stream routes through the gateway: `GET /v1/stream?conv_id=&from=N` and `DELETE
// /v1/stream?conv_id=` go to the node that owns the conversation for the caller's tenant (the one
// memory of owners); `POST /v1/streams/lookup` is split by owner (stream-lookup.ts). No owner known
// for this tenant (never seen, forgotten, another tenant's, its node gone): 404 naming the
// conversation, the same for another tenant's id as for an unknown one, and no node is asked. The
// node's answer is passed on as it came: a replay as it streams (backpressure kept, the node's
// connection closed when the client leaves), anything else bounded in bytes. Bounded in time: the
// answer's head, and each wait for the next byte of a replay.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { badRequest, GatewayError } from '#src/core/errors.ts';
import type { TargetUrl } from '#src/core/request-target.ts';
import { requestBoundedText } from '#src/core/bounded-text.ts';
import { sendError } from '../http/openai-error.ts';
import type { Caller, FeatureRoute, FeatureRouteDeps } from '../feature/request-feature.ts';
import { lookupStreams } from './stream-lookup.ts';
import { relayStream } from './stream-relay.ts';
import { ownerOf, STREAM_PATH, STREAMS_LOOKUP_PATH, unknownConversation, unreachable, upstreamHeaders } from './owner-node.ts';

/** The node's answer head. */
export const STREAM_HEAD_TIMEOUT_MS = 30_000;
/** The longest wait for a replay's next byte (a live stream waits on its generation). */
export const STREAM_IDLE_TIMEOUT_MS = 300_000;
/** The most of an answer that is not a replay (an error, a DELETE's) passed on. */
export const STREAM_ERROR_MAX_BYTES = 64 * 1024;

export function conversationRoutes(deps: FeatureRouteDeps): readonly FeatureRoute[] {
  return [
    { method: 'GET', path: STREAM_PATH, route: (req, res, url, caller) => replayStream(deps, req, res, url, caller) },
    { method: 'DELETE', path: STREAM_PATH, route: (req, res, url, caller) => stopStream(deps, req, res, url, caller) },
    { method: 'POST', path: STREAMS_LOOKUP_PATH, route: (req, res, _url, caller) => lookupStreams(deps, req, res, caller) },
  ];
}

/** Pure: the conversation and offset a route's query names, or the 400 naming what is wrong. */
export function streamQuery(
  url: TargetUrl,
  withFrom: boolean,
): { readonly id: string; readonly from: string | undefined } | GatewayError {
  const id = url.searchParams.get('conv_id') ?? '';
  if (id === '')
    return badRequest('conv_id is missing: the conversation id (the X-Conversation-Id the stream was started with)', 'conv_id');
  const from = withFrom ? (url.searchParams.get('from') ?? undefined) : undefined;
  if (from !== undefined && from !== '' && !/^\d{1,15}$/.test(from))
    return badRequest(`from must be a byte offset (a whole number of bytes already received), not '${from}'`, 'from');
  return { id, from: from === '' ? undefined : from };
}

async function replayStream(
  deps: FeatureRouteDeps,
  req: IncomingMessage,
  res: ServerResponse,
  url: TargetUrl,
  caller: Caller | undefined,
): Promise<void> {
  const query = streamQuery(url, true);
  if (query instanceof GatewayError) return sendError(res, query);
  const node = await ownerOf(deps, caller, query.id);
  if (node === undefined) return sendError(res, unknownConversation(query.id));
  const path = `${STREAM_PATH}?conv_id=${encodeURIComponent(query.id)}${query.from === undefined ? '' : `&from=${query.from}`}`;
  const target = new URL(`${node.spec.url.replace(/\/+$/, '')}${path}`);
  const relayed = await relayStream(
    deps.pools.get(node.spec),
    {
      origin: target.origin,
      path: target.pathname + target.search,
      headers: upstreamHeaders(deps, req, node, 0),
      headTimeoutMs: STREAM_HEAD_TIMEOUT_MS,
      idleTimeoutMs: STREAM_IDLE_TIMEOUT_MS,
      errorMaxBytes: STREAM_ERROR_MAX_BYTES,
    },
    res,
    (status, headers) => {
      const type = headers['content-type'];
      return {
        'content-type': typeof type === 'string' ? type : status === 200 ? 'text/event-stream' : 'application/json',
        'x-switchyard-node': node.spec.name,
        ...(status === 200 ? { 'cache-control': 'no-cache', 'x-accel-buffering': 'no' } : {}),
      };
    },
  );
  if (relayed.kind === 'failed')
    sendError(res, unreachable(node, query.id, relayed.error.message), { 'x-switchyard-node': node.spec.name });
}

async function stopStream(
  deps: FeatureRouteDeps,
  req: IncomingMessage,
  res: ServerResponse,
  url: TargetUrl,
  caller: Caller | undefined,
): Promise<void> {
  const query = streamQuery(url, false);
  if (query instanceof GatewayError) return sendError(res, query);
  const node = await ownerOf(deps, caller, query.id);
  if (node === undefined) return sendError(res, unknownConversation(query.id));
  const answer = await requestBoundedText(
    `${node.spec.url.replace(/\/+$/, '')}${STREAM_PATH}?conv_id=${encodeURIComponent(query.id)}`,
    {
      dispatcher: deps.pools.get(node.spec),
      method: 'DELETE',
      headers: upstreamHeaders(deps, req, node, 0),
      timeoutMs: STREAM_HEAD_TIMEOUT_MS,
      maxBytes: STREAM_ERROR_MAX_BYTES,
    },
  );
  if (!answer.ok) return sendError(res, unreachable(node, query.id, answer.error), { 'x-switchyard-node': node.spec.name });
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string | number> = { 'x-switchyard-node': node.spec.name };
  if (answer.status === 204) {
    res.writeHead(204, headers).end();
    return;
  }
  res.writeHead(answer.status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(answer.text),
  });
  res.end(answer.text);
}
