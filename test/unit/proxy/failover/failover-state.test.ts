import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  afterFailure,
  endpointLackers,
  siteExclusionsAfter,
  startFailover,
  withFailure,
} from '#src/proxy/failover/failover-state.ts';
import type { TargetFailure } from '#src/proxy/failover/target.ts';
import { failureLine } from '#src/proxy/failover/target.ts';
import { request } from '#test/fixtures/builders.ts';

const nodeFailure = (name: string, detail = 'ECONNREFUSED'): TargetFailure => ({
  target: { kind: 'node', name },
  code: 'failed',
  detail,
});
const siteFailure = (id: string, code: TargetFailure['code'], detail: string): TargetFailure => ({
  target: { kind: 'site', id },
  code,
  detail,
});

test('a failed node is tried, listed, and its lesson kept for the remaining attempts', () => {
  const start = startFailover(request('m', { promptTokens: 9000, minPromptTokens: 100 }));
  const overflow = { kind: 'context_overflow', nCtx: 4096, promptTokens: 5000, message: 'too long' } as const;
  const next = afterFailure(start, {
    next: 'fail_over',
    failure: nodeFailure('a'),
    refusal: overflow,
    loadTimedOut: false,
    bounds: { promptTokens: 5000, minPromptTokens: 5000 },
  });
  assert.deepEqual([...next.routeRequest.triedNodes], ['a']);
  assert.deepEqual([next.routeRequest.promptTokens, next.routeRequest.minPromptTokens], [5000, 5000]);
  assert.equal(next.lastRefusal, overflow);
  assert.deepEqual([...start.routeRequest.triedNodes], [], 'the earlier state is left as it was');
  const later = afterFailure(next, { next: 'fail_over', failure: nodeFailure('b'), loadTimedOut: true });
  assert.equal(later.lastRefusal, overflow, 'a failure without a refusal keeps the last one');
  assert.equal(later.loadTimedOut, true);
  assert.deepEqual([...later.routeRequest.triedNodes], ['a', 'b']);
});

test('a failed site is tried among the sites, never among the nodes, and says nothing about a local load', () => {
  const timedOut = afterFailure(startFailover(request('m')), {
    next: 'fail_over',
    failure: nodeFailure('a'),
    loadTimedOut: true,
  });
  const next = afterFailure(timedOut, { next: 'fail_over', failure: siteFailure('eu', 'unreachable', 'ECONNREFUSED') });
  assert.deepEqual([...next.triedSites], ['eu']);
  assert.deepEqual([...next.routeRequest.triedNodes], ['a']);
  assert.equal(next.loadTimedOut, true, 'the local load that timed out is still what the answer names');
  assert.deepEqual(
    next.failures.map(failureLine),
    ['a: ECONNREFUSED', 'site:eu: ECONNREFUSED'],
    'one list, nodes and sites alike',
  );
});

test('a site chosen but not sent is listed as a failure, not as tried', () => {
  const next = withFailure(
    startFailover(request('m')),
    siteFailure('eu', 'not_tried', "not tried, this site's key is not loaded yet"),
  );
  assert.deepEqual(next.failures.map(failureLine), ["site:eu: not tried, this site's key is not loaded yet"]);
  assert.equal(next.triedSites.size, 0);
});

test('sites tried are listed by their real failure in place of already_tried', () => {
  const excluded = [
    { site: 'a', code: 'already_tried' },
    { site: 'b', code: 'already_tried' },
    { site: 'old', code: 'stale', detail: 'no record yet' },
    { site: 'c', code: 'already_tried' },
  ] as const;
  const failures = [
    nodeFailure('a'),
    siteFailure('a', 'unreachable', 'ECONNREFUSED'),
    siteFailure('b', 'refused', 'answered 503 no_healthy_node'),
    siteFailure('c', 'not_tried', 'no key'),
  ];
  assert.deepEqual(siteExclusionsAfter(excluded, failures), [
    { site: 'a', code: 'unreachable', detail: 'ECONNREFUSED' },
    { site: 'b', code: 'refused', detail: 'answered 503 no_healthy_node' },
    { site: 'old', code: 'stale', detail: 'no record yet' },
    { site: 'c', code: 'already_tried' },
  ]);
});

test('endpointLackers: the nodes that answered a route-level 404, only when every target tried did', () => {
  const lacks = (name: string): TargetFailure => ({
    target: { kind: 'node', name },
    code: 'refused',
    detail: '404 {"detail":"Not Found"}',
    lacksEndpoint: true,
  });
  const after = (failures: readonly TargetFailure[]) => {
    let state = startFailover(request('m'));
    for (const failure of failures) state = afterFailure(state, { next: 'fail_over', failure, loadTimedOut: false });
    return endpointLackers(state);
  };
  assert.equal(after([]), undefined, 'nothing tried: the failover did not end for that');
  assert.deepEqual([...(after([lacks('a')]) ?? [])], ['a']);
  assert.deepEqual([...(after([lacks('a'), lacks('b')]) ?? [])], ['a', 'b']);
  const refused: TargetFailure = { target: { kind: 'node', name: 'c' }, code: 'refused', detail: 'prompt too long' };
  assert.equal(after([lacks('a'), refused]), undefined, 'another refusal beside them');
  assert.equal(after([nodeFailure('c'), lacks('a')]), undefined, 'a failed node beside them');
  assert.equal(after([lacks('a'), siteFailure('far', 'unreachable', 'ECONNREFUSED')]), undefined, 'a site beside them');
});
