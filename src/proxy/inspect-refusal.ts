// The strategy for a 400/404: read the error body (bounded) to recognise a refusal the gateway can
// act on (the prompt overflows this node's context, the node does not have the model). A refusal
// reaches the handler, never the client; any other error is the node's own answer, passed on.

import type { AttemptOutcome } from './attempt-outcome.ts';
import type { HeldReservation } from './held-budget.ts';
import { holdBody } from './held-body.ts';
import { deliverHeld, heldBodyBrokeOff } from './held-answer.ts';
import { streamThrough } from './stream-through.ts';
import type { ClientSide, UpstreamAnswer } from './upstream-answer.ts';
import { interpretUpstreamError } from './upstream-error.ts';

/** Largest upstream error body read to recognise it (errors are small; anything bigger passes through). */
const MAX_INSPECTED_ERROR_BYTES = 64 * 1024;

/**
 * Error bodies stay outside the shared held-bytes budget: they are small and fixed-bound, and an
 * overflow refusal left unrecognised under memory pressure would reach the client instead of
 * failing over.
 */
const UNBUDGETED: HeldReservation = Object.freeze({ take: () => true, release: () => {} });

export async function inspectRefusal(answer: UpstreamAnswer, client: ClientSide): Promise<AttemptOutcome> {
  const held = await holdBody(answer.body, MAX_INSPECTED_ERROR_BYTES, UNBUDGETED);
  switch (held.kind) {
    case 'failed':
      return heldBodyBrokeOff(answer.status, held.error, client.exchange);
    case 'too_big':
      // A bigger error body (vLLM echoes the input) is the node's own answer, passed on uninspected.
      return streamThrough(answer, client, { eventStream: false, head: held.head });
    case 'complete': {
      const refusal = interpretUpstreamError(answer.status, held.bytes.toString('utf8'));
      if (refusal !== undefined) return { kind: 'refused', refusal, error: refusal.message, status: answer.status };
      return deliverHeld(answer, held.bytes, client);
    }
  }
}
