// Anthropic Messages served over OpenAI Chat Completions: the Translation (translation.ts) the
// request feature uses when no node for the model speaks /v1/messages and some speak
// /v1/chat/completions. Pure; what is lost either way is listed in docs/protocols-endpoints.md.

import type { JsonObject, Translation } from '../translation.ts';
import { chatRequest } from './chat-request.ts';
import { anthropicError, nodeErrorMessage } from './error-shape.ts';
import type { MessagesMemo } from './memo.ts';
import { messageAnswer } from './message-answer.ts';
import { MessageStream } from './message-stream.ts';

const translation: Translation = {
  name: 'messages→chat',
  client: '/v1/messages',
  node: '/v1/chat/completions',
  request: (body: JsonObject) => chatRequest(body),
  answer: (nodeAnswer, memo, context) => messageAnswer(nodeAnswer, memo as MessagesMemo, context),
  stream: (memo, context) => new MessageStream(memo as MessagesMemo, context),
  error: (status, nodeBody) => anthropicError(status, nodeErrorMessage(status, nodeBody)),
};

export const MESSAGES_OVER_CHAT: Translation = Object.freeze(translation);
