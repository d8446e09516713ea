// A tenant's x-ratelimit-* headers (set on the response before the attempt) are the ones the client
// gets, never a node's own (a node behind an API with limits of its own sends them too).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServerResponse, IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { systemClock } from '#src/core/clock.ts';
import { clientHead, type AttemptExchange, type BodyFeed, type ClientSide } from '#src/proxy/attempt/attempt-exchange.ts';

function clientWith(own: Record<string, string>): ClientSide {
  const res = new ServerResponse(new IncomingMessage(new Socket()));
  for (const [name, value] of Object.entries(own)) res.setHeader(name, value);
  return {
    res,
    exchange: {} as AttemptExchange,
    extraResponseHeaders: { 'x-request-id': 'r' },
    clock: systemClock,
    startedMs: 0,
    sentMs: 0,
  };
}

const nodeHeaders = (): Record<string, string> => ({
  'content-type': 'application/json',
  'x-ratelimit-limit-requests': '10000',
  'x-ratelimit-remaining-tokens': '999999',
});

test("a tenant with rate limits: the node's x-ratelimit-* headers are dropped, the tenant's stand", () => {
  const head = clientHead(
    { status: 200, headers: nodeHeaders(), body: {} as BodyFeed },
    clientWith({ 'x-ratelimit-limit-requests': '3' }),
  );
  assert.deepEqual(head, { 'content-type': 'application/json', 'x-request-id': 'r' });
});

test("no tenant limits: the node's headers pass as before", () => {
  const head = clientHead({ status: 200, headers: nodeHeaders(), body: {} as BodyFeed }, clientWith({}));
  assert.equal(head['x-ratelimit-limit-requests'], '10000');
});
