// Where a conversation's stream is, for the caller's tenant: the node the one memory of owners
// names (routing/policies/owned-ids.ts), if it is still in the fleet; and what is sent to it.

import type { IncomingMessage } from 'node:http';
import { GatewayError } from '#src/core/errors.ts';
import { conversationOwnerId } from '#src/routing/index.ts';
import { upstreamRequestHeaders } from '../http/hop-headers.ts';
import { OPEN_CALLER, type Caller, type FeatureRouteDeps } from '../feature/request-feature.ts';

export const STREAM_PATH = '/v1/stream';
export const STREAMS_LOOKUP_PATH = '/v1/streams/lookup';

export type OwnerNode = { readonly spec: NonNullable<ReturnType<FeatureRouteDeps['node']>>['spec'] };

/** Pure: the 404 for a conversation no node is known to hold for this caller. */
export function unknownConversation(id: string): GatewayError {
  return new GatewayError('GW_NOT_FOUND', `No stream for conversation '${id}' is known to this gateway.`, {
    status: 404,
    openaiType: 'invalid_request_error',
    param: 'conv_id',
    openaiCode: 'not_found',
  });
}

/** The node that owns `id` for `caller`'s tenant, if known and still in the fleet. */
export async function ownerOf(deps: FeatureRouteDeps, caller: Caller | undefined, id: string): Promise<OwnerNode | undefined> {
  const tenant = (caller ?? OPEN_CALLER).queue.name;
  const name = await deps.answerOwner?.(tenant, conversationOwnerId(id));
  return name === undefined ? undefined : deps.node(name);
}

export function upstreamHeaders(
  deps: FeatureRouteDeps,
  req: IncomingMessage,
  node: OwnerNode,
  bodyBytes: number,
): Record<string, string> {
  return upstreamRequestHeaders({
    client: req.headers,
    apiKey: node.spec.apiKey,
    bodyBytes,
    requestId: deps.newRequestId(),
    clientAddress: req.socket.remoteAddress,
  });
}

export function unreachable(node: OwnerNode, id: string, error: string): GatewayError {
  return new GatewayError('GW_UPSTREAM_UNREACHABLE', `node ${node.spec.name} (the owner of conversation '${id}'): ${error}`, {
    status: 502,
    openaiType: 'server_error',
    openaiCode: 'upstream_error',
  });
}
