// Applies the node's current faults to one request before its kind answers it. Returns true when
// the fault produced (or withheld) the whole answer.

import { sleep, type Clock } from '#src/core/clock.ts';
import { untilAborted, type EndpointClass, type KindFaultReplies, type SimExchange } from '#src/sim/exchange.ts';
import type { SimFaults } from '#src/sim/faults.ts';
import { jsonReply, textReply } from '#src/sim/reply.ts';

const JSON_HEADERS: Readonly<Record<string, string>> = { 'Content-Type': 'application/json; charset=utf-8' };
const GARBAGE_BODY = '{"id":"sim-garbage","object":"list","data":[{"id":';

/** llama.cpp's answer to every request while its model loads. */
export const LOADING_MODEL_BODY = { error: { message: 'Loading model', type: 'unavailable_error', code: 503 } } as const;

async function hang(exchange: SimExchange): Promise<true> {
  await untilAborted(exchange.signal);
  return true;
}

async function injectInference(
  exchange: SimExchange,
  faults: SimFaults,
  replies: KindFaultReplies,
  clock: Clock,
): Promise<boolean> {
  switch (faults.inference) {
    case 'none':
      return false;
    case 'hang':
      return hang(exchange);
    case 'reset':
      exchange.destroySocket();
      return true;
    case 'error500':
      exchange.writer.reply(replies.internalError());
      return true;
    case 'garbage':
      exchange.writer.reply(textReply(200, GARBAGE_BODY, JSON_HEADERS));
      return true;
    case 'loading':
      exchange.writer.reply(jsonReply(503, LOADING_MODEL_BODY, JSON_HEADERS));
      return true;
    case 'midstream_reset':
      exchange.writer.cutAfterEvents(faults.midstreamAfterChunks);
      return false;
    case 'slow_headers':
      try {
        await sleep(clock, faults.slowHeadersMs, exchange.signal);
        return false;
      } catch {
        return true;
      }
  }
}

function injectModels(exchange: SimExchange, faults: SimFaults, replies: KindFaultReplies): boolean | Promise<boolean> {
  const { writer } = exchange;
  switch (faults.models) {
    case 'none':
      return false;
    case 'hang':
      return hang(exchange);
    case 'no_data':
      writer.reply(jsonReply(200, { object: 'list' }, JSON_HEADERS));
      return true;
    case 'error_body':
      writer.reply(jsonReply(200, { error: { message: 'boom' } }, JSON_HEADERS));
      return true;
    case 'garbage':
      writer.reply(textReply(200, GARBAGE_BODY, JSON_HEADERS));
      return true;
    case 'empty':
      writer.reply(replies.emptyModels());
      return true;
    case 'error500':
      writer.reply(replies.internalError());
      return true;
  }
}

export async function injectFault(
  exchange: SimExchange,
  endpoint: EndpointClass,
  faults: SimFaults,
  replies: KindFaultReplies,
  clock: Clock,
): Promise<boolean> {
  if (faults.tokenize === 'hang' && exchange.method === 'POST' && exchange.path.endsWith('/tokenize')) return hang(exchange);
  if (endpoint === 'inference') return injectInference(exchange, faults, replies, clock);
  if (endpoint === 'models') return injectModels(exchange, faults, replies);
  if (endpoint === 'health') {
    if (faults.health === 'hang') return hang(exchange);
    if (faults.health === 'fail') {
      exchange.writer.reply(replies.healthFailure());
      return true;
    }
  }
  return false;
}
