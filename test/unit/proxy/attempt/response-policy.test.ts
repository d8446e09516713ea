import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bodyCoding, planResponse, type BodyCoding, type ContentCoding } from '#src/proxy/attempt/response-policy.ts';
import { errorCodeOf } from '#src/proxy/attempt/upstream-error.ts';

const IDENTITY: BodyCoding = { kind: 'identity' };
const UNKNOWN: BodyCoding = { kind: 'unknown', name: 'compress' };
const encoded = (...codings: ContentCoding[]): BodyCoding => ({ kind: 'encoded', codings });

const cases: { status: number; contentType: string; canFailOver: boolean; plan: string; result?: string; coding?: BodyCoding }[] =
  [
    { status: 200, contentType: 'application/json', canFailOver: true, plan: 'hold_json' },
    { status: 200, contentType: 'application/json; charset=utf-8', canFailOver: false, plan: 'hold_json' },
    { status: 200, contentType: 'text/event-stream; charset=utf-8', canFailOver: true, plan: 'stream' },
    // Ollama's native streams: NDJSON passes through as it comes.
    { status: 200, contentType: 'application/x-ndjson', canFailOver: true, plan: 'stream' },
    { status: 200, contentType: 'application/ndjson; charset=utf-8', canFailOver: false, plan: 'stream' },
    { status: 200, contentType: 'text/html', canFailOver: false, plan: 'fail', result: 'invalid_body' },
    { status: 200, contentType: '', canFailOver: false, plan: 'fail', result: 'invalid_body' },
    { status: 204, contentType: '', canFailOver: false, plan: 'fail', result: 'invalid_body' },
    { status: 999, contentType: 'application/json', canFailOver: false, plan: 'fail', result: 'invalid_body' },
    { status: 600, contentType: 'application/json', canFailOver: false, plan: 'fail', result: 'invalid_body' },
    { status: 400, contentType: 'application/json', canFailOver: true, plan: 'inspect_error' },
    { status: 404, contentType: 'text/plain', canFailOver: true, plan: 'inspect_error' },
    { status: 401, contentType: 'application/json', canFailOver: true, plan: 'stream' },
    { status: 302, contentType: 'text/html', canFailOver: true, plan: 'stream' },
    { status: 503, contentType: 'application/json', canFailOver: true, plan: 'fail', result: 'http_5xx' },
    { status: 503, contentType: 'application/json', canFailOver: false, plan: 'stream' },
    { status: 200, contentType: 'application/json', canFailOver: true, plan: 'hold_json', coding: encoded('gzip') },
    { status: 200, contentType: 'text/event-stream', canFailOver: true, plan: 'stream', coding: encoded('zstd') },
    { status: 200, contentType: 'application/json', canFailOver: true, plan: 'fail', result: 'invalid_body', coding: UNKNOWN },
    { status: 200, contentType: 'text/event-stream', canFailOver: false, plan: 'fail', result: 'invalid_body', coding: UNKNOWN },
    { status: 400, contentType: 'application/json', canFailOver: true, plan: 'fail', result: 'invalid_body', coding: UNKNOWN },
    { status: 503, contentType: 'application/json', canFailOver: false, plan: 'fail', result: 'invalid_body', coding: UNKNOWN },
    { status: 400, contentType: 'application/json', canFailOver: true, plan: 'inspect_error', coding: encoded('br') },
    { status: 200, contentType: 'text/html', canFailOver: true, plan: 'fail', result: 'invalid_body', coding: UNKNOWN },
  ];

for (const c of cases) {
  const coding = c.coding ?? IDENTITY;
  test(`${c.status} ${c.contentType || '(none)'} ${JSON.stringify(coding)}${c.canFailOver ? ', another node left' : ''} → ${c.plan}${c.result ? ` (${c.result})` : ''}`, () => {
    const plan = planResponse({ status: c.status, contentType: c.contentType, coding, canFailOver: () => c.canFailOver });
    assert.equal(plan.kind, c.plan);
    if (plan.kind === 'fail') assert.equal(plan.result, c.result);
    if (coding.kind === 'unknown' && plan.kind === 'fail')
      assert.match(plan.error, /content-encoding "compress", which the gateway cannot decode/);
  });
}

const codings: { header: string | string[] | undefined; coding: BodyCoding }[] = [
  { header: undefined, coding: IDENTITY },
  { header: 'identity', coding: IDENTITY },
  { header: 'GZIP', coding: encoded('gzip') },
  { header: 'x-gzip', coding: encoded('gzip') },
  { header: 'deflate', coding: encoded('deflate') },
  { header: ' br ', coding: encoded('br') },
  { header: 'zstd', coding: encoded('zstd') },
  { header: 'gzip, br', coding: encoded('gzip', 'br') },
  { header: ['gzip', 'identity'], coding: encoded('gzip') },
  { header: 'compress', coding: { kind: 'unknown', name: 'compress' } },
  { header: 'gzip, snappy', coding: { kind: 'unknown', name: 'snappy' } },
  { header: 'gzip, gzip, gzip, gzip', coding: { kind: 'unknown', name: 'gzip, gzip, gzip, gzip' } },
  { header: 'toString', coding: { kind: 'unknown', name: 'tostring' } },
];

for (const c of codings) {
  test(`content-encoding ${JSON.stringify(c.header)} → ${JSON.stringify(c.coding)}`, () => {
    assert.deepEqual(bodyCoding(c.header), c.coding);
  });
}

// A remote site's answers (passOnErrors false): no error of its own reaches the client.
const siteCases: { status: number; coding: BodyCoding; plan: string; result?: string }[] = [
  { status: 200, coding: IDENTITY, plan: 'hold_json' },
  { status: 302, coding: IDENTITY, plan: 'inspect_error' },
  { status: 401, coding: IDENTITY, plan: 'inspect_error' },
  { status: 429, coding: IDENTITY, plan: 'inspect_error' },
  { status: 503, coding: IDENTITY, plan: 'inspect_error' },
  { status: 401, coding: UNKNOWN, plan: 'fail', result: 'http_error' },
  { status: 503, coding: UNKNOWN, plan: 'fail', result: 'http_5xx' },
];
for (const c of siteCases) {
  test(`a remote site's ${c.status} (${c.coding.kind}), last site or not → ${c.plan}${c.result ? ` (${c.result})` : ''}`, () => {
    for (const canFailOver of [true, false]) {
      const plan = planResponse({
        status: c.status,
        contentType: 'application/json',
        coding: c.coding,
        canFailOver: () => canFailOver,
        passOnErrors: false,
      });
      assert.equal(plan.kind, c.plan);
      if (plan.kind === 'fail') assert.equal(plan.result, c.result);
    }
  });
}

test("what this site repeats of another site's error: a short code token, nothing else", () => {
  const cases: [string, string | undefined][] = [
    ['{"error":{"message":"node gpu-7 is down","code":"no_healthy_node"}}', 'no_healthy_node'],
    ['{"error":{"message":"x","code":"Node gpu-7 down"}}', undefined],
    ['{"error":{"message":"x","code":42}}', undefined],
    ['{"error":"x"}', undefined],
    ['<html>bad gateway</html>', undefined],
  ];
  for (const [body, code] of cases) assert.equal(errorCodeOf(body), code, body);
});

test('an endpoint that answers media (audio): a 2xx in any type streams through; its errors and JSON are judged as ever', () => {
  const table: { status: number; contentType: string; plan: string }[] = [
    { status: 200, contentType: 'audio/mpeg', plan: 'stream' },
    { status: 200, contentType: 'text/plain; charset=utf-8', plan: 'stream' },
    { status: 200, contentType: '', plan: 'stream' },
    { status: 200, contentType: 'application/json', plan: 'hold_json' },
    { status: 200, contentType: 'text/event-stream', plan: 'stream' },
    { status: 404, contentType: 'text/plain', plan: 'inspect_error' },
    { status: 500, contentType: 'audio/mpeg', plan: 'fail' },
  ];
  for (const row of table) {
    const plan = planResponse({
      status: row.status,
      contentType: row.contentType,
      coding: IDENTITY,
      canFailOver: () => true,
      anyMedia: true,
    });
    assert.equal(plan.kind, row.plan, `${row.status} ${row.contentType}`);
  }
  assert.equal(
    planResponse({ status: 200, contentType: 'audio/mpeg', coding: IDENTITY, canFailOver: () => true }).kind,
    'fail',
    'elsewhere: not an inference answer',
  );
});

// A translated request (answer-rewrite.ts): every error passed on is read, to be worded in the
// client's API; what would fail over still does, and answers are planned as for any request.
const reworded: { status: number; contentType: string; canFailOver: boolean; plan: string }[] = [
  { status: 401, contentType: 'application/json', canFailOver: true, plan: 'inspect_error' },
  { status: 429, contentType: 'application/json', canFailOver: false, plan: 'inspect_error' },
  { status: 503, contentType: 'application/json', canFailOver: false, plan: 'inspect_error' },
  { status: 503, contentType: 'application/json', canFailOver: true, plan: 'fail' },
  { status: 200, contentType: 'application/json', canFailOver: true, plan: 'hold_json' },
  { status: 200, contentType: 'text/event-stream', canFailOver: true, plan: 'stream' },
];
for (const c of reworded) {
  test(`translated: ${c.status} ${c.contentType}${c.canFailOver ? ', another node left' : ''} → ${c.plan}`, () => {
    const plan = planResponse({
      status: c.status,
      contentType: c.contentType,
      coding: IDENTITY,
      canFailOver: () => c.canFailOver,
      rewordsErrors: true,
    });
    assert.equal(plan.kind, c.plan);
  });
}
