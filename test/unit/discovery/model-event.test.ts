// Table: one pushed model event (a router frame, read) → the node's discovery state, through the
// same state machine a listing drives (nextDiscoveryState with `pushed`).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  carryProgress,
  initialDiscoveryState,
  keepNewerPushes,
  modelsAfterEvent,
  nextDiscoveryState,
  type DiscoveredModel,
  type DiscoveryState,
} from '#src/discovery/index.ts';
import { readRouterFrame, type ModelEvent } from '#src/kinds/index.ts';

const POLICY = { failThreshold: 3 };

function model(id: string, status: string, extra: Partial<DiscoveredModel> = {}): DiscoveredModel {
  return { id, loaded: status === 'loaded', status, contextTokens: undefined, aliases: [], ...extra };
}

function known(models: readonly DiscoveredModel[]): DiscoveryState {
  return nextDiscoveryState(initialDiscoveryState(0), { ok: true, models }, 1_000, POLICY);
}

function eventOf(frame: unknown): ModelEvent {
  const reading = readRouterFrame(frame);
  assert.equal(reading.ok, true, JSON.stringify(reading));
  return (reading as { event: ModelEvent }).event;
}

/** The frame applied as the registry applies it: the listing after it, then the state machine. */
function apply(state: DiscoveryState, frame: unknown, now = 2_000): { state: DiscoveryState; outcome: string } {
  const outcome = modelsAfterEvent(state.models, eventOf(frame));
  if (outcome.kind !== 'models')
    return { state, outcome: outcome.kind === 'relist' ? `relist${outcome.fresh ? ' fresh' : ''}` : 'none' };
  return { state: nextDiscoveryState(state, { ok: true, models: outcome.models, pushed: true }, now, POLICY), outcome: 'models' };
}

const LISTING = [model('a', 'loaded'), model('b', 'unloaded'), model('c', 'sleeping')];

const ROWS: readonly {
  frame: unknown;
  outcome: string;
  a?: Partial<DiscoveredModel>;
  b?: Partial<DiscoveredModel>;
  ids?: string[];
}[] = [
  {
    frame: { model: 'a', event: 'status_change', data: { status: 'unloaded', exit_code: 1 } },
    outcome: 'models',
    a: { status: 'failed', loaded: false, exitCode: 1 },
  },
  {
    frame: { model: 'a', event: 'status_change', data: { status: 'unloaded', exit_code: 0 } },
    outcome: 'models',
    a: { status: 'unloaded', loaded: false },
  },
  {
    frame: { model: 'a', event: 'status_change', data: { status: 'sleeping' } },
    outcome: 'models',
    a: { status: 'sleeping', loaded: false },
  },
  { frame: { model: 'a', event: 'status_change', data: { status: 'loaded' } }, outcome: 'none' },
  {
    frame: { model: 'b', event: 'model_status', data: { status: 'loading' } },
    outcome: 'models',
    b: { status: 'loading', loaded: false },
  },
  {
    frame: {
      model: 'b',
      event: 'status_change',
      data: { status: 'loading', progress: { stages: ['text_model'], current: 'text_model', value: 0.5 } },
    },
    outcome: 'models',
    b: { status: 'loading', progress: { kind: 'load', stage: 'text_model', fraction: 0.5 } },
  },
  {
    frame: { model: 'b', event: 'status_change', data: { status: 'loaded', info: {} } },
    outcome: 'models',
    b: { status: 'loaded', loaded: true },
  },
  { frame: { model: 'b', event: 'model_remove' }, outcome: 'models', ids: ['a', 'c'] },
  { frame: { model: 'new/repo', event: 'model_status', data: { status: 'downloading' } }, outcome: 'relist' },
  { frame: { model: '*', event: 'models_reload' }, outcome: 'relist fresh' },
  { frame: { model: 'gone', event: 'model_remove' }, outcome: 'none' },
];

for (const row of ROWS) {
  test(`pushed ${JSON.stringify(row.frame)} → ${row.outcome}`, () => {
    const before = known(LISTING);
    const { state, outcome } = apply(before, row.frame);
    assert.equal(outcome, row.outcome);
    // A push never moves the phase, the failure count or the listing's time: the poll stays the check.
    assert.equal(state.phase, 'known');
    assert.equal(state.lastSuccessAt, before.lastSuccessAt);
    assert.equal(state.fails, 0);
    if (row.a !== undefined) assert.deepEqual({ ...state.models[0] }, { ...model('a', 'loaded'), ...row.a });
    if (row.b !== undefined) {
      const { progress, ...rest } = state.models[1] as DiscoveredModel;
      const { progress: wanted, ...wantedRest } = { ...model('b', 'unloaded'), ...row.b };
      assert.deepEqual(rest, wantedRest);
      assert.deepEqual(progress, wanted);
    }
    if (row.ids !== undefined)
      assert.deepEqual(
        state.models.map((m) => m.id),
        row.ids,
      );
  });
}

test('a download: progress, then downloaded; a failed download leaves the listing', () => {
  let state = known([...LISTING, model('org/repo', 'downloading')]);
  state = apply(state, {
    model: 'org/repo',
    event: 'download_progress',
    data: { progress: { u: { done: 25, total: 100 } } },
  }).state;
  assert.deepEqual(state.models[3]?.progress, { kind: 'download', doneBytes: 25, totalBytes: 100, fraction: 0.25 });
  state = apply(state, { model: 'org/repo', event: 'download_finished' }).state;
  assert.equal(state.models[3]?.status, 'downloaded');
  assert.deepEqual(state.models[3]?.progress, { kind: 'download', fraction: 1, doneBytes: 100, totalBytes: 100 });
  const failed = apply(known([...LISTING, model('x/y', 'downloading')]), { model: 'x/y', event: 'download_failed' }).state;
  assert.deepEqual(
    failed.models.map((m) => m.id),
    ['a', 'b', 'c'],
  );
});

test('a push does not apply to a node without a listing (untried, expired): the poll decides there', () => {
  const untried = initialDiscoveryState(0);
  const models = [model('a', 'failed', { exitCode: 1 })];
  assert.equal(nextDiscoveryState(untried, { ok: true, models, pushed: true }, 5, POLICY), untried);
  let expired = known(LISTING);
  for (let i = 0; i < 3; i++) expired = nextDiscoveryState(expired, { ok: false, reason: 'error', error: 'refused' }, 5, POLICY);
  assert.equal(expired.phase, 'expired');
  assert.equal(nextDiscoveryState(expired, { ok: true, models, pushed: true }, 6, POLICY), expired);
  // Degraded (a listing failed once): the push applies, and the failure count stays.
  const degraded = nextDiscoveryState(known(LISTING), { ok: false, reason: 'error', error: 'refused' }, 5, POLICY);
  const pushed = nextDiscoveryState(degraded, { ok: true, models, pushed: true }, 6, POLICY);
  assert.equal(pushed.phase, 'degraded');
  assert.equal(pushed.fails, 1);
  assert.deepEqual(pushed.models, models);
});

test('a listing asked before a push does not undo it; one asked after it does', () => {
  const current = [model('a', 'failed', { exitCode: 1 }), model('b', 'unloaded')];
  const stale = [model('a', 'loaded'), model('b', 'unloaded')];
  const pushedAt = new Map([['a', 100]]);
  assert.deepEqual(keepNewerPushes(stale, current, pushedAt, 90), [current[0], stale[1]]);
  assert.equal(keepNewerPushes(stale, current, pushedAt, 110), stale);
});

test('a listing of the same status keeps the pushed progress; a new status drops it', () => {
  const progress = { kind: 'download' as const, fraction: 0.5 };
  const prev = [model('r', 'downloading', { progress })];
  assert.deepEqual(carryProgress(prev, [model('r', 'downloading')])[0]?.progress, progress);
  assert.equal(carryProgress(prev, [model('r', 'unloaded')])[0]?.progress, undefined);
  const untouched = [model('a', 'loaded')];
  assert.equal(carryProgress([model('a', 'loaded')], untouched), untouched);
});
