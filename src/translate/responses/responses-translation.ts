// OpenAI Responses (`POST /v1/responses`, Codex's API) served by a node that speaks only Chat
// Completions. Each direction is its own file: the request (chat-request.ts, over
// input-messages.ts and tool-list.ts), the whole answer (chat-answer.ts), the event stream
// (event-stream.ts) and the error body (error-body.ts). What is lost each way:
// docs/protocols-endpoints.md ("Responses over Chat Completions").

import type { Translation } from '#src/translate/translation.ts';
import { responseFromChat } from '#src/translate/responses/chat-answer.ts';
import { chatRequest } from '#src/translate/responses/chat-request.ts';
import { errorBody } from '#src/translate/responses/error-body.ts';
import { responsesEventStream } from '#src/translate/responses/event-stream.ts';
import { responsesMemo } from '#src/translate/responses/memo.ts';

const translation: Translation = {
  name: 'responses→chat',
  client: '/v1/responses',
  node: '/v1/chat/completions',
  request: chatRequest,
  answer: (nodeAnswer, memo, context) => responseFromChat(nodeAnswer, responsesMemo(memo), context),
  stream: (memo, context) => responsesEventStream(responsesMemo(memo), context),
  error: errorBody,
};

export const RESPONSES_OVER_CHAT: Translation = Object.freeze(translation);
