import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Exclusion } from '#src/routing/index.ts';
import { afterFailure, startFailover, type FailoverState } from '#src/proxy/failover/attempt-feedback.ts';
import { refusalAnswer, type RefusalFacts } from '#src/proxy/refusal/refusal-answer.ts';
import type { TargetFailure } from '#src/proxy/failover/target.ts';
import { node, request, snapshotOf } from '#test/fixtures/builders.ts';

const refused = (
  reason: RefusalFacts['admission']['reason'],
  excluded: readonly Exclusion[] = [],
  waitedMs = 0,
): RefusalFacts['admission'] => ({ kind: 'refused', reason, excluded, waitedMs });
const other = node('gpu-a', { models: ['other'] });

function facts(over: Partial<RefusalFacts> = {}): RefusalFacts {
  return {
    admission: refused('unavailable'),
    model: 'm',
    requestedModel: 'm',
    state: startFailover(request('m')),
    retryAfterSeconds: 5,
    snapshot: () => snapshotOf([other]),
    ...over,
  };
}

function failedAt(state: FailoverState, failure: TargetFailure, extra: { loadTimedOut?: boolean } = {}): FailoverState {
  return afterFailure(state, { next: 'fail_over', failure, ...extra });
}

const codeOf = (f: RefusalFacts): [string, number | undefined, string | null | undefined, string | undefined] => {
  const answer = refusalAnswer(f);
  return answer.kind === 'client_gone'
    ? ['client_gone', undefined, undefined, undefined]
    : ['error', answer.error.status, answer.error.openaiCode, answer.counted];
};

test('which answer a request no target served gets, for nodes and sites alike', () => {
  const nodeDown: TargetFailure = { target: { kind: 'node', name: 'gpu-b' }, code: 'failed', detail: 'ECONNREFUSED' };
  const siteDown: TargetFailure = { target: { kind: 'site', id: 'eu' }, code: 'unreachable', detail: 'ECONNREFUSED' };
  const overflow = {
    kind: 'context_overflow',
    nCtx: 2048,
    promptTokens: 3000,
    message: 'site:eu answered 400 context_overflow',
  } as const;
  const unknown = { kind: 'model_not_found', message: 'site:eu answered 404 model_not_found' } as const;
  const sited = (state: FailoverState, refusal: typeof overflow | typeof unknown) =>
    afterFailure(state, { next: 'fail_over', failure: { ...siteDown, code: 'refused' }, refusal });
  const table: [string, RefusalFacts, ReturnType<typeof codeOf>][] = [
    ['the client left', facts({ admission: refused('aborted') }), ['client_gone', undefined, undefined, undefined]],
    ['the queue is full', facts({ admission: refused('queue_full') }), ['error', 429, 'queue_full', undefined]],
    ['the queue timed out', facts({ admission: refused('queue_timeout', [], 900) }), ['error', 429, 'queue_timeout', undefined]],
    ['the wake timed out', facts({ admission: refused('wake_timeout') }), ['error', 503, 'wake_timeout', undefined]],
    [
      'too large for every node',
      facts({ admission: refused('too_large'), state: startFailover(request('m', { promptTokens: 9000 })) }),
      ['error', 400, 'context_length_exceeded', 'context_rejected'],
    ],
    [
      'a site refused it as too long',
      facts({ state: sited(startFailover(request('m', { promptTokens: 3000 })), overflow) }),
      ['error', 400, 'context_length_exceeded', 'context_rejected'],
    ],
    [
      'a site does not have it after all',
      facts({ state: sited(startFailover(request('m')), unknown) }),
      ['error', 404, 'model_not_found', undefined],
    ],
    [
      'a load timed out, then a site failed',
      facts({ state: failedAt(failedAt(startFailover(request('m')), nodeDown, { loadTimedOut: true }), siteDown) }),
      ['error', 503, 'model_load_timeout', undefined],
    ],
    [
      'a node and a site tried failed',
      facts({ state: failedAt(failedAt(startFailover(request('m')), nodeDown, { loadTimedOut: false }), siteDown) }),
      ['error', 502, 'upstream_failed', undefined],
    ],
    ['no node lists it and every listing is current', facts(), ['error', 404, 'model_not_found', 'model_not_found']],
    [
      'a site lists it',
      facts({ sites: { excluded: [{ site: 'eu', code: 'too_small' }], models: new Set(['m']) } }),
      ['error', 503, 'no_healthy_node', 'no_healthy_node'],
    ],
    [
      'a router full of pinned models, nothing else could take it',
      facts({ admission: refused('blocked', [pinnedOn('solo')]) }),
      ['error', 503, 'blocked_by_pinned_models', 'no_healthy_node'],
    ],
    [
      'blocked here, but a remote site might take it later',
      facts({ admission: refused('blocked', [pinnedOn('solo')]), sites: { excluded: [siteExcl()], models: new Set(['m']) } }),
      ['error', 503, 'no_healthy_node', 'no_healthy_node'],
    ],
    [
      'blocked here, and no remote site lists it',
      facts({
        admission: refused('blocked', [pinnedOn('solo')]),
        sites: { excluded: [{ site: 'eu', code: 'missing' }], models: new Set() },
      }),
      ['error', 503, 'blocked_by_pinned_models', 'no_healthy_node'],
    ],
    [
      'out of scope, whatever the admission said',
      facts({ admission: refused('wake_timeout'), answerAs: 'unknown', visible: () => true }),
      ['error', 404, 'model_not_found', 'model_not_found'],
    ],
    [
      'out of scope while a node has never listed (untried)',
      facts({ answerAs: 'unknown', snapshot: () => snapshotOf([other, node('new')]) }),
      ['error', 404, 'model_not_found', 'model_not_found'],
    ],
    [
      'only a site was tried, and failed',
      facts({
        state: failedAt(startFailover(request('m')), siteDown),
        sites: { excluded: [siteExcl()], models: new Set(['m']) },
      }),
      ['error', 503, 'no_healthy_node', 'no_healthy_node'],
    ],
  ];
  for (const [name, f, expected] of table) assert.deepEqual(codeOf(f), expected, name);
});

function pinnedOn(router: string): Exclusion {
  return {
    node: router,
    filter: 'router-room',
    code: 'pinned',
    detail:
      'its slots are held by pinned model(s) keeper (1/1 loaded, max_instances = its --models-max); a request never switches out a pinned model',
  };
}

test('blocked by pins: no Retry-After, final (x-should-retry: false), naming the router and its pins; a scoped client is told neither', () => {
  const open = refusalAnswer(facts({ admission: refused('blocked', [pinnedOn('solo')]) }));
  assert.equal(open.kind, 'error');
  if (open.kind !== 'error') return;
  assert.equal(open.error.retryAfterSeconds, undefined);
  assert.equal(open.error.final, true);
  assert.match(open.error.message, /^model 'm' cannot be loaded \(router solo: its slots are held by pinned model\(s\) keeper/);
  const scoped = refusalAnswer(facts({ admission: refused('blocked', [pinnedOn('solo')]), visible: (name) => name === 'm' }));
  assert.equal(scoped.kind, 'error');
  if (scoped.kind !== 'error') return;
  assert.doesNotMatch(scoped.error.message, /solo|keeper/);
  assert.deepEqual(scoped.error.details, {});
});

function siteExcl() {
  return { site: 'eu', code: 'unreachable', detail: 'ECONNREFUSED' } as const;
}

test('the one failures list names nodes and sites alike in the 502', () => {
  const state = failedAt(
    failedAt(startFailover(request('m')), { target: { kind: 'node', name: 'gpu-b' }, code: 'failed', detail: 'ECONNRESET' }),
    { target: { kind: 'site', id: 'eu' }, code: 'refused', detail: 'answered 503 no_healthy_node' },
  );
  const answer = refusalAnswer(facts({ state }));
  assert.equal(answer.kind, 'error');
  if (answer.kind !== 'error') return;
  assert.equal(
    answer.error.message,
    "every node and site tried for model 'm' failed before answering: gpu-b: ECONNRESET; site:eu: answered 503 no_healthy_node",
  );
});

test("site exclusions are listed beside the node counts in the 503, each with its reason, in this site's words", () => {
  const excluded: Exclusion[] = [{ node: 'gpu-a', filter: 'serves-model', code: 'missing', detail: 'lists other' }];
  const sites = {
    excluded: [siteExcl(), { site: 'old', code: 'stale', detail: 'no record yet' }] as const,
    models: new Set(['m']),
  };
  const answer = refusalAnswer(facts({ admission: refused('unavailable', excluded), sites }));
  assert.equal(answer.kind, 'error');
  if (answer.kind !== 'error') return;
  assert.equal(
    answer.error.message,
    "no healthy node available for model 'm': 1 excluded (missing: 1); remote sites: eu unreachable, old stale",
  );
  assert.deepEqual(answer.error.details, {
    exclusions: { missing: 1 },
    sites: [
      { site: 'eu', reason: 'unreachable', detail: 'ECONNREFUSED' },
      { site: 'old', reason: 'stale', detail: 'no record yet' },
    ],
  });
});
