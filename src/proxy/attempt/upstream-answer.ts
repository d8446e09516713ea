// What the answering strategies (inspect-refusal, hold-json, stream-through) share: the node's
// answer as the client will get it, and the client side they write it to.

import type { ServerResponse } from 'node:http';
import type { Clock } from '#src/core/clock.ts';
import type { AttemptExchange } from './attempt-exchange.ts';
import type { BodyFeed } from './body-feed.ts';

export interface UpstreamAnswer {
  readonly status: number;
  /**
   * The client's copy of the node's headers: hop-by-hop ones stripped, encoding dropped once decoded.
   * Built once per attempt and finished in place when the head is sent (clientHead), never copied.
   */
  readonly headers: Record<string, string | string[]>;
  /** The node's body, decoded when it came compressed. */
  readonly body: BodyFeed;
}

export interface ClientSide {
  readonly res: ServerResponse;
  readonly exchange: AttemptExchange;
  /** Added to whatever the node sent (the answering node's name, the request id). */
  readonly extraResponseHeaders: Readonly<Record<string, string>>;
  readonly clock: Clock;
  /** When the request arrived, for the time to the first byte. */
  readonly startedMs: number;
  /** When the request was sent to the node (monotonic ms), for the node's speed (stream-timing.ts, decodeSample). */
  readonly sentMs: number;
}

/**
 * The head the client gets: the node's headers without its length (the gateway states its own, or
 * sends chunked), plus the gateway's own. Finishes `answer.headers` in place: one head per answer.
 */
export function clientHead(
  answer: UpstreamAnswer,
  client: ClientSide,
  contentLength?: number,
): Record<string, string | string[]> {
  const headers = answer.headers;
  if (contentLength === undefined) delete headers['content-length'];
  else headers['content-length'] = String(contentLength);
  // A Vary the gateway already set (CORS: `Origin`) is kept next to the node's own.
  const ours = client.res.getHeader('vary');
  if (ours !== undefined && headers['vary'] !== undefined) headers['vary'] = `${String(ours)}, ${String(headers['vary'])}`;
  // A tenant's own rate-limit headers (set by the gateway before the attempt) win over a node's:
  // the client is limited by its tenant here, not by whatever the node's API key may do there.
  if (client.res.hasHeader('x-ratelimit-limit-requests') || client.res.hasHeader('x-ratelimit-limit-tokens')) {
    for (const name of Object.keys(headers)) if (name.startsWith('x-ratelimit-')) delete headers[name];
  }
  return Object.assign(headers, client.extraResponseHeaders);
}
