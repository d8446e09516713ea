import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestLine, requestLineText } from '#src/logs/request-line.ts';
import { FORWARDED_FROM } from '#src/core/forwarded-from.ts';
import { reportsTable } from '#src/core/request-fields.ts';
import { FORWARDED_REPORTS } from '#src/mesh/forwarding/index.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';

type Finished = ProxyEvents['proxy:request-finished'];
type Detail = NonNullable<Finished['detail']>;

const END = Date.UTC(2026, 11, 2, 1, 2, 3, 456);
const detail = (over: Partial<Detail> = {}): Detail => ({
  requestId: 'r1',
  endedAt: END,
  requestedModel: 'alias',
  servedModel: 'm',
  attempts: [{ target: 'n1', kind: 'node', outcome: 'success', status: 200 }],
  queueWaitMs: 0,
  bytesIn: 50,
  bytesOut: 400,
  refusal: undefined,
  firstTokenMs: undefined,
  interTokenMs: undefined,
  ...over,
});
const event = (over: Partial<Finished> = {}): Finished => ({
  endpoint: '/v1/chat/completions',
  model: 'm',
  node: 'n1',
  status: 200,
  durationMs: 12.345,
  firstByteMs: 3.21,
  brokenError: undefined,
  clientAborted: false,
  detail: detail(),
  ...over,
});

const CASES: readonly { name: string; event: Finished; expect: Record<string, unknown> }[] = [
  {
    name: 'an answered JSON request',
    event: event({ tenant: 't', usage: { promptTokens: 5, completionTokens: 2, counted: 'usage' } }),
    expect: {
      time: '2026-12-02T01:02:03.456Z',
      request_id: 'r1',
      tenant: 't',
      endpoint: '/v1/chat/completions',
      model_requested: 'alias',
      model: 'm',
      node: 'n1',
      attempts: [{ node: 'n1', outcome: 'success', status: 200 }],
      status: 200,
      queue_wait_ms: 0,
      first_byte_ms: 3.2,
      duration_ms: 12.3,
      prompt_tokens: 5,
      completion_tokens: 2,
      tokens_from: 'usage',
      bytes_in: 50,
      bytes_out: 400,
    },
  },
  {
    name: 'a stream cut short, its tokens seen',
    event: event({
      brokenError: 'upstream reset',
      usage: { promptTokens: undefined, completionTokens: 3, counted: 'seen' },
      detail: detail({ firstTokenMs: 20.04, interTokenMs: 4.55 }),
    }),
    expect: {
      time: '2026-12-02T01:02:03.456Z',
      request_id: 'r1',
      endpoint: '/v1/chat/completions',
      model_requested: 'alias',
      model: 'm',
      node: 'n1',
      attempts: [{ node: 'n1', outcome: 'success', status: 200 }],
      status: 200,
      error: 'upstream reset',
      queue_wait_ms: 0,
      first_byte_ms: 3.2,
      first_token_ms: 20,
      inter_token_ms: 4.6,
      duration_ms: 12.3,
      completion_tokens: 3,
      tokens_from: 'seen',
      bytes_in: 50,
      bytes_out: 400,
    },
  },
  {
    name: 'a refusal before any attempt',
    event: event({
      node: undefined,
      status: 404,
      firstByteMs: undefined,
      detail: detail({
        attempts: [],
        refusal: 'GW_MODEL_NOT_FOUND',
        requestedModel: 'nope',
        servedModel: 'nope',
        queueWaitMs: 12,
      }),
    }),
    expect: {
      time: '2026-12-02T01:02:03.456Z',
      request_id: 'r1',
      endpoint: '/v1/chat/completions',
      model_requested: 'nope',
      model: 'nope',
      attempts: [],
      status: 404,
      refusal: 'GW_MODEL_NOT_FOUND',
      queue_wait_ms: 12,
      duration_ms: 12.3,
      bytes_in: 50,
      bytes_out: 400,
    },
  },
  {
    name: 'a failover ending at a site, the failed node listed first',
    event: event({
      node: 'site:c',
      detail: detail({
        attempts: [
          { target: 'n1', kind: 'node', outcome: 'connect_error', status: undefined },
          { target: 'c', kind: 'site', outcome: 'success', status: 200 },
        ],
      }),
    }),
    expect: {
      time: '2026-12-02T01:02:03.456Z',
      request_id: 'r1',
      endpoint: '/v1/chat/completions',
      model_requested: 'alias',
      model: 'm',
      site: 'c',
      attempts: [
        { node: 'n1', outcome: 'connect_error' },
        { site: 'c', outcome: 'success', status: 200 },
      ],
      status: 200,
      queue_wait_ms: 0,
      first_byte_ms: 3.2,
      duration_ms: 12.3,
      bytes_in: 50,
      bytes_out: 400,
    },
  },
  {
    name: 'a forward from another site, the client gone',
    event: event({
      status: 499,
      clientAborted: true,
      firstByteMs: undefined,
      fields: { [FORWARDED_FROM.name]: { site: 'a', claimedTenant: 'x'.repeat(300), claimedClass: undefined } },
    }),
    expect: {
      time: '2026-12-02T01:02:03.456Z',
      request_id: 'r1',
      endpoint: '/v1/chat/completions',
      model_requested: 'alias',
      model: 'm',
      node: 'n1',
      from_site: 'a',
      from_tenant: 'x'.repeat(256),
      attempts: [{ node: 'n1', outcome: 'success', status: 200 }],
      status: 499,
      client_aborted: true,
      queue_wait_ms: 0,
      duration_ms: 12.3,
      bytes_in: 50,
      bytes_out: 400,
    },
  },
  {
    name: 'an event without detail (a request that failed inside the gateway)',
    event: event({ status: 500, node: undefined, detail: undefined, firstByteMs: undefined }),
    expect: {
      time: new Date(END + 1).toISOString(),
      request_id: '',
      endpoint: '/v1/chat/completions',
      attempts: [],
      status: 500,
      queue_wait_ms: 0,
      duration_ms: 12.3,
      bytes_in: 0,
      bytes_out: 0,
    },
  },
];

for (const c of CASES) {
  test(`request line: ${c.name}`, () => {
    // The features' fields of a request are laid by their reports (the mesh's: a forward's sender).
    assert.deepEqual(
      requestLine(c.event, END + 1, () => reportsTable([FORWARDED_REPORTS])),
      c.expect,
    );
  });
}

test('a line is one JSON object and a newline, control characters escaped', () => {
  const text = requestLineText(event({ brokenError: 'bad\nthing\u2028' }), END);
  assert.equal(text.indexOf('\n'), text.length - 1);
  assert.ok(!text.includes('\u2028'), 'U+2028 escaped: no reader splits the line there');
  assert.equal((JSON.parse(text) as { error: string }).error, 'bad\nthing\u2028');
});
