// The Fleet view's last error: a failed request or an ejection counts as well as a failed probe or
// listing, and the latest of them is shown; an attempt that is not the node's failure is not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attemptFailureText, ejectionText, latestFailure } from '#src/admin/dashboard/node-failures.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';

const attempt = (
  result: ProxyEvents['proxy:attempt']['result'],
  status?: number,
  error?: string,
): ProxyEvents['proxy:attempt'] => ({ node: 'n', model: 'm', result, status, error });

test('which attempts are the node failing, and how they read', () => {
  const table: [ProxyEvents['proxy:attempt'], string | undefined][] = [
    [attempt('success', 200), undefined],
    [attempt('client_abort'), undefined],
    [attempt('context_overflow', 400), undefined],
    [attempt('contradictory_refusal', 400), undefined],
    [attempt('http_5xx', 503), 'request failed: http_5xx 503'],
    [attempt('connect_error', undefined, 'ECONNREFUSED'), 'request failed: connect_error (ECONNREFUSED)'],
    [attempt('stream_error', 200, 'reset'), 'request failed: stream_error 200 (reset)'],
  ];
  for (const [e, want] of table) assert.equal(attemptFailureText(e), want, e.result);
  assert.ok((attemptFailureText(attempt('timeout', undefined, 'x'.repeat(500))) ?? '').length <= 200, 'bounded');
});

test('the latest failure wins; none is null', () => {
  assert.equal(latestFailure(undefined, undefined), null);
  assert.deepEqual(latestFailure({ text: 'probe', at: 10 }, undefined, { text: 'request', at: 20 }), { text: 'request', at: 20 });
  assert.deepEqual(latestFailure({ text: 'probe', at: 30 }, { text: 'listing', at: 5 }, { text: 'request', at: 20 }), {
    text: 'probe',
    at: 30,
  });
  assert.equal(ejectionText(31_000, 1_000), 'ejected by passive health for 30 s');
});
