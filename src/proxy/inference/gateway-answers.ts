// The requests the gateway answers itself, by endpoint, sent to no node: the token counts
// (Anthropic's and the OpenAI-style `input_tokens`) where no node for the model counts natively (request/gateway-count.ts). The spine asks
// this table once, just before the failover (inference-handler.ts, its `send` step): an endpoint
// with no entry (every generating one) costs one lookup, and an entry that gives undefined sends
// the request on as usual.

import type { GatewayError } from '#src/core/errors.ts';
import type { InferenceEndpoint } from '#src/config/index.ts';
import { countHere, type AnsweredHere, type CountRequest } from '../request/gateway-count.ts';
import type { InferenceDeps } from './inference-deps.ts';

/** Answers the request at the gateway (or refuses it), or undefined: send it on. */
export type AnswerHere = (
  deps: InferenceDeps,
  request: CountRequest,
) => AnsweredHere | GatewayError | Promise<AnsweredHere | GatewayError> | undefined;

export const GATEWAY_ANSWERS: Readonly<Partial<Record<InferenceEndpoint, AnswerHere>>> = Object.freeze({
  '/v1/messages/count_tokens': countHere,
  '/v1/chat/completions/input_tokens': countHere,
  '/v1/responses/input_tokens': countHere,
});
