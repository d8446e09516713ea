// What each attempt result says of the node's own health (passive ejection): a table over every result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { upstreamVerdict } from '#src/proxy/failover/upstream-verdict.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';

type Result = ProxyEvents['proxy:attempt']['result'];

test('every attempt result has a passive-health verdict: explained refusals prove the node alive, transport faults count against it', () => {
  const table: Record<Result, 'success' | 'failure' | 'neutral'> = {
    success: 'success',
    context_overflow: 'success',
    model_not_found: 'success',
    endpoint_missing: 'success',
    http_5xx: 'failure',
    connect_error: 'failure',
    reset: 'failure',
    timeout: 'failure',
    stream_error: 'failure',
    invalid_body: 'failure',
    contradictory_refusal: 'failure',
    client_abort: 'neutral',
    interim_response: 'neutral',
    http_error: 'neutral',
    load_timeout: 'neutral',
  };
  for (const [result, verdict] of Object.entries(table)) assert.equal(upstreamVerdict(result as Result), verdict, result);
});
