// The streaming strategy: the node's answer goes to the client chunk by chunk as it arrives. Once
// the head is sent there is no failing over: a break ends the response (an SSE stream cleanly, with
// no invented [DONE]; anything else by closing the socket, so the client cannot take it as whole).

import type { AttemptOutcome } from './attempt-outcome.ts';
import { pump } from './pump.ts';
import { UsageTail } from './usage-tail.ts';
import { clientHead, type ClientSide, type UpstreamAnswer } from './upstream-answer.ts';

export interface StreamOptions {
  /** True for text/event-stream answers. */
  readonly eventStream: boolean;
  /** Bytes already read while trying to hold the answer; the rest is still in the (paused) body. */
  readonly head?: Buffer;
}

export async function streamThrough(answer: UpstreamAnswer, client: ClientSide, options: StreamOptions): Promise<AttemptOutcome> {
  const { res } = client;
  const { head } = options;
  // A pumped answer may break off short of a declared length; sent chunked, its end is explicit
  // (an SSE stream then ends cleanly instead of leaving the client waiting for missing bytes).
  res.writeHead(answer.status, clientHead(answer, client));
  if (head !== undefined) {
    client.exchange.heldBytesWritten();
    res.write(head);
  }
  const tail = new UsageTail();
  if (head !== undefined) tail.push(head);
  const pumping = pump(answer.body, res, client.clock, tail);
  // holdBody paused a body it stopped reading; a new 'data' listener does not restart it.
  if (head !== undefined) answer.body.resume();
  const pumped = await pumping;
  const firstByteMs = pumped.firstByteAt === undefined ? undefined : pumped.firstByteAt - client.startedMs;
  if (pumped.ok) return { kind: 'delivered', status: answer.status, firstByteMs, promptTokens: tail.promptTokens() };
  if (pumped.clientGone || client.exchange.clientLeft()) return { kind: 'client_gone', status: answer.status };
  if (options.eventStream) res.end();
  else res.destroy();
  return { kind: 'broken', status: answer.status, error: pumped.error, firstByteMs };
}
