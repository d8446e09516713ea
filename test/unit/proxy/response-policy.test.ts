import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bodyCoding, planResponse, type BodyCoding } from '#src/proxy/response-policy.ts';

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
