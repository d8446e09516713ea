// The resumable-streams feature (issue 41, item 4; docs/protocols.md §7.z4): a llama-server (single
// or router) keeps a streamed completion sent with `X-Conversation-Id` in a ring that outlives the
// client's connection, and serves `GET /v1/stream?conv_id=&from=N`, `POST /v1/streams/lookup` and
// `DELETE /v1/stream?conv_id=`. Through the gateway:
//   - a streamed request carrying the header is followed (the seam's header mark: a request
//     without it runs nothing of this folder): each attempt's node is remembered as the owner of
//     the conversation, for the caller's tenant, in the one memory of owners (the sessions table,
//     shared by [cluster] replicas through the store), as the attempt goes and again as it ends,
//     so the owner is kept for the node's retention after the stream's end. A request whose answer
//     the client gets rewritten (translated) is not followed: its bytes are not the node's, so a
//     byte offset into them names nothing on the node.
//   - the three routes go to the owner (conversation-routes.ts, stream-lookup.ts), never through
//     admission: nothing is loaded, nothing waits in a queue.

import { conversationOwnerId } from '#src/routing/index.ts';
import type { MarkedAttempts, MarkedRequest, RequestFeature } from '../feature/request-feature.ts';
import { conversationRoutes } from './conversation-routes.ts';

/** The header llama-server reads (any case; node:http keys it lower case). */
export const CONVERSATION_HEADER = 'x-conversation-id';

export interface StreamsDeps {
  /** Where the one memory of owners learns (the fleet-reports port's `learnAnswerNode`); undefined = nothing learns. */
  readonly learn: ((tenant: string, ownedId: string, node: string) => void) | undefined;
}

export function streamsFeature(deps: StreamsDeps): RequestFeature {
  const learn = deps.learn;
  return {
    marks:
      learn === undefined ? undefined : { header: CONVERSATION_HEADER, marked: (request) => followConversation(request, learn) },
    routes: conversationRoutes,
  };
}

/** Pure but for `learn`: what a marked request's attempts teach; undefined = not followed (not a stream, or rewritten). */
export function followConversation(
  request: MarkedRequest,
  learn: (tenant: string, ownedId: string, node: string) => void,
): MarkedAttempts | undefined {
  if (!request.stream || request.rewritten) return undefined;
  const tenant = request.caller.queue.name;
  const owned = conversationOwnerId(request.value);
  return {
    attempted: (target) => {
      if (target.kind === 'node') learn(tenant, owned, target.name);
    },
    // Learnt again at the end: the node keeps the stream for its retention from then on.
    concluded: (target) => {
      if (target.kind === 'node') learn(tenant, owned, target.name);
    },
  };
}
