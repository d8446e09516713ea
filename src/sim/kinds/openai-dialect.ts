// A generic OpenAI-compatible server's answers (what a proxy or a small server in front of any
// model says, in OpenAI's own wording): errors {"error":{message,type,param,code}} with OpenAI's
// types and codes, the `context_length_exceeded` 400, and vLLM's chat/completions shapes (the
// reference OpenAI-compatible bodies, [DONE]-terminated streams). It serves no Anthropic Messages.

import { decideVllm, type ContextError } from '#src/sim/context-rules.ts';
import type { InferenceDialect } from '#src/sim/inference-dialect.ts';
import { jsonReply, type Reply } from '#src/sim/reply.ts';
import { requestedEncoding } from '#src/sim/embedding-encoding.ts';
import { vllmDialect } from '#src/sim/kinds/vllm-dialect.ts';

export const OPENAI_JSON_HEADERS: Readonly<Record<string, string>> = { 'Content-Type': 'application/json' };
const OPENAI_SSE_HEADERS: Readonly<Record<string, string>> = { 'Content-Type': 'text/event-stream; charset=utf-8' };

export function openaiJson(status: number, body: unknown): Reply {
  return jsonReply(status, body, OPENAI_JSON_HEADERS);
}

export function openaiError(status: number, message: string, type: string, param: string | null, code: string | null): Reply {
  return openaiJson(status, { error: { message, type, param, code } });
}

function contextError(error: ContextError): Reply {
  const output = 'requestedTokens' in error ? error.requestedTokens : 0;
  return openaiError(
    400,
    `This model's maximum context length is ${error.contextTokens} tokens. However, your messages resulted in ${error.promptTokens + output} tokens (${error.promptTokens} in the messages, ${output} in the completion). Please reduce the length of the messages or completion.`,
    'invalid_request_error',
    'messages',
    'context_length_exceeded',
  );
}

export function openaiDialect(random: () => number): InferenceDialect {
  const shapes = vllmDialect(random);
  const serverError = (): Reply =>
    openaiError(500, 'The server had an error while processing your request.', 'server_error', null, null);
  return {
    ...shapes,
    anthropic: undefined,
    json: openaiJson,
    sseHeaders: OPENAI_SSE_HEADERS,
    malformedJson: () =>
      openaiError(
        400,
        "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
        'invalid_request_error',
        null,
        null,
      ),
    missingField: (field) =>
      openaiError(400, `Missing required parameter: '${field}'.`, 'invalid_request_error', field, 'missing_required_parameter'),
    decide: decideVllm,
    contextError,
    embeddingsTooLong: (promptTokens, contextTokens) =>
      promptTokens > contextTokens
        ? openaiError(
            400,
            `This model's maximum context length is ${contextTokens} tokens, however you requested ${promptTokens} tokens (${promptTokens} in your prompt; 0 for the completion). Please reduce your prompt; or completion length.`,
            'invalid_request_error',
            null,
            null,
          )
        : undefined,
    kvExhaustedReply: serverError,
    kvExhaustedEvent: () => ({ data: JSON.parse(serverError().body) as unknown }),
    embeddingEncoding: (value) =>
      requestedEncoding(value) ??
      openaiError(
        400,
        `'${String(value)}' is not one of ['float', 'base64'] - 'encoding_format'`,
        'invalid_request_error',
        'encoding_format',
        null,
      ),
  };
}
