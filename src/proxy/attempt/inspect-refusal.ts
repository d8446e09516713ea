// The strategy for a 400/404: read the error body (bounded) to recognise a refusal the gateway can
// act on (the prompt overflows this node's context, the node does not have the model). A refusal
// reaches the handler, never the client; any other error is the node's own answer, passed on —
// except from a remote site (`passOn` false; any 3xx-5xx comes here): its answer fails the attempt,
// named by status and error code only, and this site answers in its own terms.

import type { AttemptOutcome } from './attempt-outcome.ts';
import { deliverHeld, heldBodyBrokeOff, holdBody } from './held-answer.ts';
import { streamThrough } from './stream-through.ts';
import type { ClientSide, HeldReservation, UpstreamAnswer } from './attempt-exchange.ts';
import { errorCodeOf, interpretUpstreamError } from './upstream-error.ts';
import type { ErrorDialect } from '../http/error-dialect.ts';

/** Largest upstream error body read to recognise it (errors are small; anything bigger passes through). */
const MAX_INSPECTED_ERROR_BYTES = 64 * 1024;

/**
 * Error bodies stay outside the shared held-bytes budget: they are small and fixed-bound, and an
 * overflow refusal left unrecognised under memory pressure would reach the client instead of
 * failing over.
 */
const UNBUDGETED: HeldReservation = Object.freeze({ take: () => true, release: () => {} });

export async function inspectRefusal(
  answer: UpstreamAnswer,
  client: ClientSide,
  passOn = true,
  dialect?: ErrorDialect,
): Promise<AttemptOutcome> {
  const held = await holdBody(answer.body, MAX_INSPECTED_ERROR_BYTES, UNBUDGETED);
  const notPassed = (code: string | undefined): AttemptOutcome => {
    const error = `answered ${answer.status}${code === undefined ? '' : ` ${code}`}`;
    if (held.kind === 'too_big') answer.body.destroy(new Error(`${error}: not passed on`));
    // A 5xx that states no error code is a site in trouble (or a proxy before it): it backs off. One
    // with a code is the site's own refusal of this request: it answered, and stays reachable.
    return {
      kind: 'failed',
      result: answer.status >= 500 && code === undefined ? 'http_5xx' : 'http_error',
      error,
      status: answer.status,
    };
  };
  switch (held.kind) {
    case 'failed':
      return heldBodyBrokeOff(answer.status, held.error, client.exchange);
    case 'too_big':
      if (!passOn) return notPassed(undefined);
      // A bigger error body (vLLM echoes the input) is the node's own answer, passed on uninspected.
      return streamThrough(answer, client, { eventStream: false, head: held.head });
    case 'complete': {
      const text = held.bytes.toString('utf8');
      const refusal = interpretUpstreamError(answer.status, text);
      if (refusal !== undefined) return { kind: 'refused', refusal, error: refusal.message, status: answer.status };
      if (!passOn) return notPassed(errorCodeOf(text));
      // On an endpoint of another dialect (Anthropic's), the node's own words in that dialect's shape.
      const worded = dialect?.passedOn(answer.status, text);
      if (worded === undefined) return deliverHeld(answer, held.bytes, client);
      return deliverHeld(
        { ...answer, headers: { ...answer.headers, 'content-type': 'application/json' } },
        Buffer.from(worded, 'utf8'),
        client,
      );
    }
  }
}
