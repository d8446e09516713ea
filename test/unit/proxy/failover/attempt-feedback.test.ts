import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  afterFailure,
  attemptEvent,
  endpointLackers,
  judgeNodeAttempt,
  judgeSiteAttempt,
  siteExclusionsAfter,
  startFailover,
  upstreamVerdict,
  withFailure,
} from '#src/proxy/failover/attempt-feedback.ts';
import type { AttemptOutcome } from '#src/proxy/attempt/attempt-outcome.ts';
import type { OverflowJudgement } from '#src/proxy/request/overflow-refusal.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import type { AttemptVerdict, TargetFailure } from '#src/proxy/failover/target.ts';
import { failureLine } from '#src/proxy/failover/target.ts';
import { request } from '#test/fixtures/builders.ts';

/** The verdict, which must be to fail over. */
function failOver(verdict: AttemptVerdict): Extract<AttemptVerdict, { next: 'fail_over' }> {
  assert.equal(verdict.next, 'fail_over');
  if (verdict.next !== 'fail_over') throw new Error('unreachable');
  return verdict;
}

const overflow = {
  kind: 'context_overflow',
  nCtx: 4096,
  promptTokens: 5000,
  message: 'prompt too long: node x has 4096',
} as const;
const notFound = { kind: 'model_not_found', message: 'model m not found on gpu-a' } as const;

const OUTCOMES: Record<string, AttemptOutcome> = {
  connect: { kind: 'failed', result: 'connect_error', error: 'ECONNREFUSED: connect' },
  bare5xx: { kind: 'failed', result: 'http_5xx', error: 'answered 503', status: 503 },
  coded: { kind: 'failed', result: 'http_error', error: 'answered 503 no_healthy_node', status: 503 },
  loadTimeout: { kind: 'failed', result: 'load_timeout', error: 'the model did not load within 10ms' },
  overflow: { kind: 'refused', refusal: overflow, error: 'node refused: prompt too long', status: 400 },
  notFound: { kind: 'refused', refusal: notFound, error: 'node refused: no such model', status: 404 },
  ok: { kind: 'delivered', status: 200, firstByteMs: 12, usage: { promptTokens: 30, completionTokens: 4, counted: 'usage' } },
  passed5xx: { kind: 'delivered', status: 500, firstByteMs: 3 },
  broken: { kind: 'broken', status: 200, error: 'ECONNRESET', firstByteMs: 5 },
  gone: { kind: 'client_gone', status: 200 },
};

test('one outcome-to-event mapping for node attempts and site forwards', () => {
  const table: [keyof typeof OUTCOMES, string, number | undefined, string | undefined][] = [
    ['connect', 'connect_error', undefined, 'ECONNREFUSED: connect'],
    ['bare5xx', 'http_5xx', 503, 'answered 503'],
    ['coded', 'http_error', 503, 'answered 503 no_healthy_node'],
    ['loadTimeout', 'load_timeout', undefined, 'the model did not load within 10ms'],
    ['overflow', 'context_overflow', 400, 'node refused: prompt too long'],
    ['notFound', 'model_not_found', 404, 'node refused: no such model'],
    ['ok', 'success', 200, undefined],
    ['passed5xx', 'http_5xx', 500, undefined],
    ['broken', 'stream_error', 200, 'ECONNRESET'],
    ['gone', 'client_abort', 200, undefined],
  ];
  for (const [name, result, status, error] of table) {
    assert.deepEqual(attemptEvent(OUTCOMES[name] as AttemptOutcome), { result, status, error }, name);
  }
});

const plausible: OverflowJudgement = { promptTokens: 5000, minPromptTokens: 4100, learnCtx: 4096, contradiction: undefined };
const disproved: OverflowJudgement = {
  promptTokens: 900,
  minPromptTokens: 800,
  learnCtx: undefined,
  contradiction: 'advertises a context of 8192 tokens yet refused a prompt of at most 900 tokens',
};
const neverAsked = (): OverflowJudgement => assert.fail('only an overflow refusal is judged');

test('what a node attempt means for the loop: fail over with what it taught, or the request is over', () => {
  const node = (name: keyof typeof OUTCOMES, judge: () => OverflowJudgement = neverAsked) =>
    judgeNodeAttempt('gpu-a', OUTCOMES[name] as AttemptOutcome, judge);
  const target = { kind: 'node', name: 'gpu-a' };
  assert.deepEqual(node('connect'), {
    verdict: { next: 'fail_over', failure: { target, code: 'failed', detail: 'ECONNREFUSED: connect' }, loadTimedOut: false },
    event: attemptEvent(OUTCOMES.connect as AttemptOutcome),
    learnCtx: undefined,
    modelVanished: false,
  });
  assert.equal(failOver(node('loadTimeout').verdict).loadTimedOut, true, 'a load that timed out is remembered for the answer');
  const vanished = node('notFound');
  assert.deepEqual(vanished.verdict, {
    next: 'fail_over',
    failure: { target, code: 'refused', detail: 'node refused: no such model' },
    refusal: notFound,
    loadTimedOut: false,
  });
  assert.equal(vanished.modelVanished, true, 'its listing is stale: re-list it');
  const believed = node('overflow', () => plausible);
  assert.deepEqual(believed.verdict, {
    next: 'fail_over',
    failure: { target, code: 'refused', detail: 'node refused: prompt too long' },
    refusal: overflow,
    loadTimedOut: false,
    bounds: { promptTokens: 5000, minPromptTokens: 4100 },
  });
  assert.equal(believed.learnCtx, 4096);
  assert.equal(believed.event.result, 'context_overflow');
  const lie = node('overflow', () => disproved);
  assert.equal(failOver(lie.verdict).refusal, undefined, 'a disproved refusal is not repeated to the client');
  assert.deepEqual(failOver(lie.verdict).bounds, { promptTokens: 900, minPromptTokens: 800 });
  assert.deepEqual(
    [lie.event.result, lie.event.error],
    ['contradictory_refusal', `${disproved.contradiction}: node refused: prompt too long`],
  );
  const over: [keyof typeof OUTCOMES, number, object][] = [
    ['ok', 200, { firstByteMs: 12, usage: { promptTokens: 30, completionTokens: 4, counted: 'usage' } }],
    ['passed5xx', 500, { firstByteMs: 3 }],
    ['broken', 200, { firstByteMs: 5, brokenError: 'ECONNRESET' }],
    ['gone', 499, { clientAborted: true }],
  ];
  for (const [name, status, figures] of over) assert.deepEqual(node(name).verdict, { next: 'answered', status, figures }, name);
});

test('what a site forward means: refusals keep its figures but not its words, failures back it off', () => {
  const site = (name: keyof typeof OUTCOMES) => judgeSiteAttempt('eu', OUTCOMES[name] as AttemptOutcome);
  const target = { kind: 'site', id: 'eu' };
  const table: [keyof typeof OUTCOMES, string, string, boolean][] = [
    ['connect', 'unreachable', 'ECONNREFUSED: connect', false],
    ['bare5xx', 'unreachable', 'answered 503', false],
    ['coded', 'refused', 'answered 503 no_healthy_node', true],
    ['overflow', 'refused', 'answered 400 context_overflow', true],
    ['notFound', 'refused', 'answered 404 model_not_found', true],
  ];
  for (const [name, code, detail, reachable] of table) {
    const judged = site(name);
    assert.equal(judged.reachable, reachable, name);
    const verdict = failOver(judged.verdict);
    assert.deepEqual(verdict.failure, { target, code, detail }, name);
    assert.equal(verdict.loadTimedOut, undefined, `${name}: a site says nothing about a local load`);
    assert.equal(verdict.bounds, undefined, `${name}: a site's count never narrows the local bounds`);
  }
  assert.deepEqual(failOver(site('overflow').verdict).refusal, { ...overflow, message: 'site:eu answered 400 context_overflow' });
  assert.equal(failOver(site('coded').verdict).refusal, undefined, 'a coded refusal has no figures to keep');
  assert.deepEqual(site('ok'), {
    verdict: {
      next: 'answered',
      status: 200,
      figures: { firstByteMs: 12, usage: { promptTokens: 30, completionTokens: 4, counted: 'usage' } },
    },
    event: attemptEvent(OUTCOMES.ok as AttemptOutcome),
    reachable: true,
  });
  assert.equal(site('broken').reachable, true, 'a stream that broke had begun to answer');
  assert.deepEqual(
    [site('gone').reachable, site('gone').verdict],
    [undefined, { next: 'answered', status: 499, figures: { clientAborted: true } }],
  );
});

test('a route-level 404 fails over marked as the node lacking the endpoint, and teaches it', () => {
  const missing = { kind: 'endpoint_missing', message: '404 {"detail":"Not Found"}' } as const;
  const judged = judgeNodeAttempt('sg', { kind: 'refused', refusal: missing, error: missing.message, status: 404 }, neverAsked);
  assert.deepEqual(judged.verdict, {
    next: 'fail_over',
    failure: { target: { kind: 'node', name: 'sg' }, code: 'refused', detail: missing.message, lacksEndpoint: true },
    refusal: missing,
    loadTimedOut: false,
  });
  assert.equal(judged.lacksEndpoint, missing.message);
  // Any other refusal is not marked.
  const other = failOver(judgeNodeAttempt('sg', OUTCOMES.notFound as AttemptOutcome, neverAsked).verdict);
  assert.equal(other.failure.lacksEndpoint, undefined);
});

// ---- the failover state ----

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

// What each attempt result says of the node's own health (passive ejection): a table over every result.
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
