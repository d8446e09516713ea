// How an answer of the batch APIs (OpenAI's Files and Batches, Anthropic's Message Batches) is
// sent: an error in the API's own shape, a JSONL body streamed (a file's content, a batch's
// results), or JSON.

import type { ServerResponse } from 'node:http';
import { GatewayError } from '#src/core/errors.ts';
import { OPENAI_ERRORS, sendError, sendJson, type ErrorDialect } from '#src/proxy/index.ts';

export function sendApiAnswer(res: ServerResponse, answer: unknown, dialect: ErrorDialect = OPENAI_ERRORS): void | Promise<void> {
  if (answer instanceof GatewayError) return sendError(res, answer, {}, dialect);
  if (answer !== undefined && typeof (answer as { pipe?: unknown }).pipe === 'function')
    return streamJsonl(res, answer as NodeJS.ReadableStream);
  sendJson(res, 200, answer);
}

function streamJsonl(res: ServerResponse, body: NodeJS.ReadableStream): Promise<void> {
  return new Promise((resolve) => {
    res.writeHead(200, { 'content-type': 'application/jsonl' });
    body.on('error', () => res.destroy());
    res.on('close', resolve);
    body.pipe(res);
  });
}
