import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bodyCoding, planResponse, type BodyCoding } from '#src/proxy/response-policy.ts';
import { errorCodeOf } from '#src/proxy/upstream-error.ts';

const cases: { status: number; contentType: string; canFailOver: boolean; plan: string; result?: string; coding?: BodyCoding }[] = [
  { status: 200, contentType: 'application/json', canFailOver: true, plan: 'hold_json' },
  { status: 200, contentType: 'application/json; charset=utf-8', canFailOver: false, plan: 'hold_json' },
  { status: 200, contentType: 'text/event-stream; charset=utf-8', canFailOver: true, plan: 'stream' },
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
  { status: 200, contentType: 'application/json', canFailOver: true, plan: 'hold_json', coding: 'gzip' },
  { status: 200, contentType: 'application/json', canFailOver: true, plan: 'stream', coding: 'unknown' },
  { status: 400, contentType: 'application/json', canFailOver: true, plan: 'stream', coding: 'unknown' },
  { status: 400, contentType: 'application/json', canFailOver: true, plan: 'inspect_error', coding: 'br' },
  { status: 200, contentType: 'text/html', canFailOver: true, plan: 'fail', result: 'invalid_body', coding: 'unknown' },
];

for (const c of cases) {
  const coding = c.coding ?? 'identity';
  test(`${c.status} ${c.contentType || '(none)'} ${coding}${c.canFailOver ? ', another node left' : ''} → ${c.plan}${c.result ? ` (${c.result})` : ''}`, () => {
    const plan = planResponse({ status: c.status, contentType: c.contentType, coding, canFailOver: () => c.canFailOver });
    assert.equal(plan.kind, c.plan);
    if (plan.kind === 'fail') assert.equal(plan.result, c.result);
  });
}

const codings: { header: string | string[] | undefined; coding: BodyCoding }[] = [
  { header: undefined, coding: 'identity' },
  { header: 'identity', coding: 'identity' },
  { header: 'GZIP', coding: 'gzip' },
  { header: 'x-gzip', coding: 'gzip' },
  { header: 'deflate', coding: 'deflate' },
  { header: ' br ', coding: 'br' },
  { header: 'zstd', coding: 'unknown' },
  { header: 'gzip, br', coding: 'unknown' },
  { header: ['gzip', 'identity'], coding: 'gzip' },
];

for (const c of codings) {
  test(`content-encoding ${JSON.stringify(c.header)} → ${c.coding}`, () => {
    assert.equal(bodyCoding(c.header), c.coding);
  });
}

// A remote site's answers (passOnErrors false): no error of its own reaches the client.
const siteCases: { status: number; coding: BodyCoding; plan: string; result?: string }[] = [
  { status: 200, coding: 'identity', plan: 'hold_json' },
  { status: 302, coding: 'identity', plan: 'inspect_error' },
  { status: 401, coding: 'identity', plan: 'inspect_error' },
  { status: 429, coding: 'identity', plan: 'inspect_error' },
  { status: 503, coding: 'identity', plan: 'inspect_error' },
  { status: 401, coding: 'unknown', plan: 'fail', result: 'http_error' },
  { status: 503, coding: 'unknown', plan: 'fail', result: 'http_5xx' },
];
for (const c of siteCases) {
  test(`a remote site's ${c.status} (${c.coding}), last site or not → ${c.plan}${c.result ? ` (${c.result})` : ''}`, () => {
    for (const canFailOver of [true, false]) {
      const plan = planResponse({ status: c.status, contentType: 'application/json', coding: c.coding, canFailOver: () => canFailOver, passOnErrors: false });
      assert.equal(plan.kind, c.plan);
      if (plan.kind === 'fail') assert.equal(plan.result, c.result);
    }
  });
}

test('what this site repeats of another site\'s error: a short code token, nothing else', () => {
  const cases: [string, string | undefined][] = [
    ['{"error":{"message":"node gpu-7 is down","code":"no_healthy_node"}}', 'no_healthy_node'],
    ['{"error":{"message":"x","code":"Node gpu-7 down"}}', undefined],
    ['{"error":{"message":"x","code":42}}', undefined],
    ['{"error":"x"}', undefined],
    ['<html>bad gateway</html>', undefined],
  ];
  for (const [body, code] of cases) assert.equal(errorCodeOf(body), code, body);
});
