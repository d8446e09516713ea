// The request gates' judging (src/proxy/feature/request-gates.ts): in the caller's order, the
// first verdict other than "pass" decides; admissions are applied as they come (headers on the
// answer, `finished` chained onto the report), so a later gate's refusal still finishes an earlier
// admission; only a gate that returns a promise is waited for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '#src/core/errors.ts';
import { judgeAdmission, judgeBody, judgeModel } from '#src/proxy/feature/request-gates.ts';
import type { RequestGate, SizedRequest } from '#src/proxy/feature/request-feature.ts';
import type { RequestReport } from '#src/proxy/request/request-report.ts';
import type { ServerResponse } from 'node:http';

const refusal = (code: string) => ({
  kind: 'refused' as const,
  error: new GatewayError('GW_BAD_REQUEST', code, { status: 400, openaiType: 'invalid_request_error' }),
});
const SIZED = {} as SizedRequest;

function answer(): { res: ServerResponse; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  return {
    res: { setHeader: (name: string, value: string) => void (headers[name] = value) } as unknown as ServerResponse,
    headers,
  };
}

function reportOf(): RequestReport {
  return { onFinish: undefined, usage: { promptTokens: 3, completionTokens: 4 } } as unknown as RequestReport;
}

test('no gates: every stage passes, at once (no promise)', () => {
  assert.equal(judgeBody([], Buffer.from('{}'), {} as never), undefined);
  assert.equal(judgeModel([], 'm'), undefined);
  const { res, headers } = answer();
  const report = reportOf();
  assert.equal(judgeAdmission([], SIZED, res, report), undefined);
  assert.deepEqual(headers, {});
  assert.equal(report.onFinish, undefined);
});

test('the first gate with a verdict decides the model stage; gates without the stage are skipped', () => {
  const seen: string[] = [];
  const visible = (name: string): boolean => name === 'a';
  const gates: RequestGate[] = [
    { body: () => undefined },
    { model: (m) => (seen.push(`scope ${m}`), visible(m) ? undefined : { kind: 'unknown', visible }) },
    { model: (m) => (seen.push(`second ${m}`), refusal('second')) },
  ];
  assert.equal(judgeModel(gates, 'b')?.kind, 'unknown');
  assert.deepEqual(seen, ['scope b'], 'the later gate is not asked');
  assert.equal(judgeModel(gates, 'a')?.kind, 'refused');
});

test('admissions apply as they come: headers set, finished chained in order, run with the report usage', async () => {
  const finished: string[] = [];
  const gates: RequestGate[] = [
    {
      admit: () =>
        Promise.resolve({
          kind: 'admitted' as const,
          headers: { 'x-ratelimit-limit-requests': '3' },
          finished: (status, usage) => void finished.push(`limits ${status} ${usage?.completionTokens}`),
        }),
    },
    { admit: () => ({ kind: 'admitted' as const, finished: (status) => void finished.push(`second ${status}`) }) },
  ];
  const { res, headers } = answer();
  const report = reportOf();
  assert.equal(await judgeAdmission(gates, SIZED, res, report), undefined);
  assert.deepEqual(headers, { 'x-ratelimit-limit-requests': '3' });
  report.onFinish?.(200, undefined, undefined);
  assert.deepEqual(finished, ['limits 200 4', 'second 200']);
});

test('a later refusal ends the request, and the earlier admission is still finished when it is reported', async () => {
  const finished: number[] = [];
  const gates: RequestGate[] = [
    { admit: () => ({ kind: 'admitted' as const, finished: (status) => void finished.push(status) }) },
    { admit: () => Promise.resolve(refusal('replayed')) },
    { admit: () => assert.fail('a gate after the refusal is never asked') },
  ];
  const { res } = answer();
  const report = reportOf();
  const refused = await judgeAdmission(gates, SIZED, res, report);
  assert.equal(refused?.error.message, 'replayed');
  report.onFinish?.(401, undefined, undefined);
  assert.deepEqual(finished, [401]);
});

test('gates whose verdicts are at hand are judged at once: no promise for a sync verdict', () => {
  const { res, headers } = answer();
  const report = reportOf();
  const gates: RequestGate[] = [
    { admit: () => undefined },
    { admit: () => ({ kind: 'admitted' as const, headers: { 'x-a': '1' } }) },
  ];
  assert.equal(judgeAdmission(gates, SIZED, res, report), undefined);
  assert.deepEqual(headers, { 'x-a': '1' });
  const refusing: RequestGate[] = [{ admit: () => refusal('at once') }];
  assert.equal((judgeAdmission(refusing, SIZED, res, report) as { error: Error }).error.message, 'at once');
});
