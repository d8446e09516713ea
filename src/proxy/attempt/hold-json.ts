// The strategy for a whole (non-SSE) 2xx JSON answer: hold it until it is complete and parses, so a
// node that answers garbage or breaks off mid-body can still be failed over. Such answers arrive all
// at once after generation, so holding them costs no latency. One bigger than the per-answer bound,
// or than what the shared budget has left, streams through unchecked. The attempt (forward.ts) reads
// the body (held-body.ts) and asks here what the held body means.

import { Buffer } from 'node:buffer';
import type { AnswerRewrite } from './answer-rewrite.ts';
import type { AttemptOutcome } from './attempt-outcome.ts';
import { NOT_JSON, parsedJson, type HeldBody } from './held-body.ts';
import { deliverHeld, heldBodyBrokeOff } from './held-answer.ts';
import { streamThrough } from './stream-through.ts';
import { wholeAnswerUsage } from './usage-reader.ts';
import type { ClientSide, UpstreamAnswer } from './upstream-answer.ts';

/**
 * What the held body means: delivered whole, streamed on past a bound (a promise), or a failure to
 * fail over from. `rewrite`: the client gets the answer in another API (answer-rewrite.ts), which
 * only a whole answer can be put in.
 */
export function heldJsonOutcome(
  answer: UpstreamAnswer,
  client: ClientSide,
  held: HeldBody,
  rewrite?: AnswerRewrite,
): AttemptOutcome | Promise<AttemptOutcome> {
  switch (held.kind) {
    case 'failed':
      return heldBodyBrokeOff(answer.status, held.error, client.exchange);
    case 'too_big':
      // A client that left while it was read has nothing to be streamed to: the call is cut.
      if (client.exchange.clientLeft()) {
        client.exchange.abort(new Error('client closed the connection'));
        return { kind: 'client_gone', status: answer.status };
      }
      if (rewrite !== undefined) {
        client.exchange.abort(new Error('answer too big to translate'));
        return {
          kind: 'failed',
          result: 'invalid_body',
          error: `node answered ${answer.status} with a JSON body larger than the gateway holds, which it cannot translate`,
          status: answer.status,
        };
      }
      return streamThrough(answer, client, { eventStream: false, head: held.head });
    case 'complete': {
      const parsed = parsedJson(held.bytes);
      if (parsed === NOT_JSON) {
        return {
          kind: 'failed',
          result: 'invalid_body',
          error: `node answered ${answer.status} with a body that is not valid JSON`,
          status: answer.status,
        };
      }
      if (rewrite === undefined) return deliverHeld(answer, held.bytes, client, wholeAnswerUsage(parsed));
      const translated = Buffer.from(rewrite.json(parsed), 'utf8');
      answer.headers['content-type'] = 'application/json';
      return deliverHeld(answer, translated, client, wholeAnswerUsage(parsed));
    }
  }
}
