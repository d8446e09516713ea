import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  allowsModel,
  initialDiscoveryState,
  nextDiscoveryState,
  type DiscoveryResult,
  type DiscoveryState,
} from '#src/discovery/discovery-state.ts';
import type { DiscoveredModel } from '#src/discovery/discovered-model.ts';

const EARLIER = 1_000;
const NOW = 5_000;
const POLICY = { failThreshold: 3 };

function model(id: string, fields: Partial<DiscoveredModel> = {}): DiscoveredModel {
  return { id, loaded: true, status: undefined, contextTokens: undefined, aliases: [], ...fields };
}

function state(fields: Partial<DiscoveryState>): DiscoveryState {
  return { ...initialDiscoveryState(EARLIER), ...fields };
}

const A = [model('a')];
const AB = [model('a'), model('b')];
const listed = (models: readonly DiscoveredModel[]): DiscoveryResult => ({ ok: true, models });
const EMPTY = listed([]);
const FAILED: DiscoveryResult = { ok: false, reason: 'timeout', error: 'timed out after 2000 ms' };

interface Row {
  readonly name: string;
  readonly prev: DiscoveryState;
  readonly result: DiscoveryResult;
  readonly failThreshold?: number;
  readonly next: DiscoveryState;
}

// Each row is one rule; `next` is the whole expected state, so any field a rule touches is pinned.
const rows: readonly Row[] = [
  {
    name: 'a first non-empty listing makes an untried node known',
    prev: state({}),
    result: listed(AB),
    next: state({ phase: 'known', models: AB, lastSuccessAt: NOW, changedAt: NOW }),
  },
  {
    name: 'a non-empty listing resets the failure count of an untried node',
    prev: state({ fails: 2, lastError: 'boom' }),
    result: listed(A),
    next: state({ phase: 'known', models: A, lastSuccessAt: NOW, changedAt: NOW }),
  },
  {
    name: 'a new listing replaces the models of a known node without changing changedAt',
    prev: state({ phase: 'known', models: A, lastSuccessAt: EARLIER }),
    result: listed(AB),
    next: state({ phase: 'known', models: AB, lastSuccessAt: NOW }),
  },
  {
    name: 'a single empty listing keeps a known node known with its models',
    prev: state({ phase: 'known', models: A, lastSuccessAt: EARLIER }),
    result: EMPTY,
    next: state({ phase: 'known', models: A, empties: 1, lastSuccessAt: NOW }),
  },
  {
    name: 'a second empty listing in a row makes a known node known_empty with no models',
    prev: state({ phase: 'known', models: A, empties: 1, lastSuccessAt: EARLIER }),
    result: EMPTY,
    next: state({ phase: 'known_empty', models: [], empties: 2, lastSuccessAt: NOW, changedAt: NOW }),
  },
  {
    name: 'a single empty listing keeps an untried node untried',
    prev: state({}),
    result: EMPTY,
    next: state({ empties: 1, lastSuccessAt: NOW }),
  },
  {
    name: 'two empty listings make an untried node known_empty',
    prev: state({ empties: 1, lastSuccessAt: EARLIER }),
    result: EMPTY,
    next: state({ phase: 'known_empty', empties: 2, lastSuccessAt: NOW, changedAt: NOW }),
  },
  {
    name: 'a further empty listing keeps a known_empty node known_empty without changing changedAt',
    prev: state({ phase: 'known_empty', empties: 2, lastSuccessAt: EARLIER }),
    result: EMPTY,
    next: state({ phase: 'known_empty', empties: 3, lastSuccessAt: NOW }),
  },
  {
    name: 'a single empty listing keeps a degraded node degraded with its models but resets fails',
    prev: state({ phase: 'degraded', models: A, fails: 2, lastError: 'boom', lastSuccessAt: EARLIER }),
    result: EMPTY,
    next: state({ phase: 'degraded', models: A, empties: 1, lastSuccessAt: NOW }),
  },
  {
    name: 'a failure degrades a known node and keeps its last-known-good models',
    prev: state({ phase: 'known', models: A, lastSuccessAt: EARLIER }),
    result: FAILED,
    next: state({
      phase: 'degraded',
      models: A,
      fails: 1,
      lastError: 'timed out after 2000 ms',
      lastSuccessAt: EARLIER,
      changedAt: NOW,
    }),
  },
  {
    name: 'a failure resets the empty-listing count',
    prev: state({ phase: 'known', models: A, empties: 1, lastSuccessAt: EARLIER }),
    result: FAILED,
    next: state({
      phase: 'degraded',
      models: A,
      fails: 1,
      lastError: 'timed out after 2000 ms',
      lastSuccessAt: EARLIER,
      changedAt: NOW,
    }),
  },
  {
    name: 'a failure degrades a known_empty node',
    prev: state({ phase: 'known_empty', empties: 2, lastSuccessAt: EARLIER }),
    result: FAILED,
    next: state({ phase: 'degraded', fails: 1, lastError: 'timed out after 2000 ms', lastSuccessAt: EARLIER, changedAt: NOW }),
  },
  {
    name: 'a repeated failure below the threshold keeps a node degraded without changing changedAt',
    prev: state({ phase: 'degraded', models: A, fails: 1, lastError: 'old', lastSuccessAt: EARLIER }),
    result: FAILED,
    next: state({ phase: 'degraded', models: A, fails: 2, lastError: 'timed out after 2000 ms', lastSuccessAt: EARLIER }),
  },
  {
    name: 'the failThreshold-th consecutive failure expires a degraded node, keeping its models',
    prev: state({ phase: 'degraded', models: A, fails: 2, lastSuccessAt: EARLIER }),
    result: FAILED,
    next: state({
      phase: 'expired',
      models: A,
      fails: 3,
      lastError: 'timed out after 2000 ms',
      lastSuccessAt: EARLIER,
      changedAt: NOW,
    }),
  },
  {
    name: 'a failure below the threshold keeps an untried node untried',
    prev: state({}),
    result: FAILED,
    next: state({ fails: 1, lastError: 'timed out after 2000 ms' }),
  },
  {
    name: 'the failThreshold-th consecutive failure expires an untried node',
    prev: state({ fails: 2 }),
    result: FAILED,
    next: state({ phase: 'expired', fails: 3, lastError: 'timed out after 2000 ms', changedAt: NOW }),
  },
  {
    name: 'a further failure keeps an expired node expired without changing changedAt',
    prev: state({ phase: 'expired', models: A, fails: 3, lastSuccessAt: EARLIER }),
    result: FAILED,
    next: state({ phase: 'expired', models: A, fails: 4, lastError: 'timed out after 2000 ms', lastSuccessAt: EARLIER }),
  },
  {
    name: 'a single empty listing keeps an expired node expired',
    prev: state({ phase: 'expired', models: A, fails: 3, lastError: 'boom' }),
    result: EMPTY,
    next: state({ phase: 'expired', models: A, empties: 1, lastSuccessAt: NOW }),
  },
  {
    name: 'a non-empty listing recovers an expired node',
    prev: state({ phase: 'expired', models: A, fails: 5, lastError: 'boom', lastSuccessAt: EARLIER }),
    result: listed(AB),
    next: state({ phase: 'known', models: AB, lastSuccessAt: NOW, changedAt: NOW }),
  },
  {
    name: 'a non-empty listing recovers a degraded node and clears its error',
    prev: state({ phase: 'degraded', models: A, fails: 1, lastError: 'boom', lastSuccessAt: EARLIER }),
    result: listed(A),
    next: state({ phase: 'known', models: A, lastSuccessAt: NOW, changedAt: NOW }),
  },
  {
    name: 'a non-empty listing makes a known_empty node known',
    prev: state({ phase: 'known_empty', empties: 4, lastSuccessAt: EARLIER }),
    result: listed(A),
    next: state({ phase: 'known', models: A, lastSuccessAt: NOW, changedAt: NOW }),
  },
  {
    name: 'with failThreshold 1 the first failure expires a known node',
    prev: state({ phase: 'known', models: A, lastSuccessAt: EARLIER }),
    result: FAILED,
    failThreshold: 1,
    next: state({
      phase: 'expired',
      models: A,
      fails: 1,
      lastError: 'timed out after 2000 ms',
      lastSuccessAt: EARLIER,
      changedAt: NOW,
    }),
  },
  {
    name: 'a failThreshold below 1 behaves as 1',
    prev: state({}),
    result: FAILED,
    failThreshold: 0,
    next: state({ phase: 'expired', fails: 1, lastError: 'timed out after 2000 ms', changedAt: NOW }),
  },
];

for (const row of rows) {
  test(`nextDiscoveryState: ${row.name}`, () => {
    const policy = row.failThreshold === undefined ? POLICY : { failThreshold: row.failThreshold };
    assert.deepEqual(nextDiscoveryState(row.prev, row.result, NOW, policy), row.next);
  });
}

test('nextDiscoveryState: starts untried with nothing recorded', () => {
  assert.deepEqual(initialDiscoveryState(EARLIER), {
    phase: 'untried',
    models: [],
    fails: 0,
    empties: 0,
    lastError: undefined,
    lastSuccessAt: undefined,
    dropped: [],
    changedAt: EARLIER,
  });
});

test('nextDiscoveryState: expires on exactly the failThreshold-th failure in a row, not before', () => {
  let current = nextDiscoveryState(initialDiscoveryState(0), listed(A), 1, POLICY);
  const phases: string[] = [];
  for (let at = 2; at <= 5; at++) {
    current = nextDiscoveryState(current, FAILED, at, POLICY);
    phases.push(current.phase);
  }
  assert.deepEqual(phases, ['degraded', 'degraded', 'expired', 'expired']);
  assert.deepEqual(current.models, A);
  assert.equal(current.changedAt, 4);
});

test('nextDiscoveryState: a success between failures restarts the count toward expiry', () => {
  let current = nextDiscoveryState(initialDiscoveryState(0), listed(A), 1, POLICY);
  for (const result of [FAILED, FAILED, listed(A), FAILED, FAILED]) current = nextDiscoveryState(current, result, 2, POLICY);
  assert.equal(current.phase, 'degraded');
  assert.equal(current.fails, 2);
});

interface AdmissionRow {
  readonly name: string;
  readonly state: DiscoveryState;
  readonly modelId: string;
  readonly expected: ReturnType<typeof allowsModel>;
}

const admissionRows: readonly AdmissionRow[] = [
  { name: 'an untried node admits any model', state: state({}), modelId: 'anything', expected: { ok: true } },
  {
    name: 'an untried node with failures below the threshold admits any model',
    state: state({ fails: 2 }),
    modelId: 'x',
    expected: { ok: true },
  },
  { name: 'a known node admits a listed id', state: state({ phase: 'known', models: AB }), modelId: 'b', expected: { ok: true } },
  {
    name: 'a known node refuses an unlisted id',
    state: state({ phase: 'known', models: AB }),
    modelId: 'c',
    expected: { ok: false, reason: 'missing' },
  },
  {
    name: 'a known node refuses an id listed only as an alias',
    state: state({ phase: 'known', models: [model('a', { aliases: ['alias-of-a'] })] }),
    modelId: 'alias-of-a',
    expected: { ok: false, reason: 'missing' },
  },
  {
    name: 'a known node compares ids exactly',
    state: state({ phase: 'known', models: A }),
    modelId: 'A',
    expected: { ok: false, reason: 'missing' },
  },
  {
    name: 'a known node admits a listed id even when the router has it unloaded',
    state: state({ phase: 'known', models: [model('a', { loaded: false, status: 'unloaded' })] }),
    modelId: 'a',
    expected: { ok: true },
  },
  {
    name: 'a degraded node admits a last-known-good id',
    state: state({ phase: 'degraded', models: A, fails: 2 }),
    modelId: 'a',
    expected: { ok: true },
  },
  {
    name: 'a degraded node refuses an id it never listed',
    state: state({ phase: 'degraded', models: A }),
    modelId: 'b',
    expected: { ok: false, reason: 'missing' },
  },
  {
    name: 'a known_empty node refuses every model as empty',
    state: state({ phase: 'known_empty' }),
    modelId: 'a',
    expected: { ok: false, reason: 'empty' },
  },
  {
    name: 'an expired node refuses even a last-known-good id',
    state: state({ phase: 'expired', models: A }),
    modelId: 'a',
    expected: { ok: false, reason: 'expired' },
  },
];

for (const row of admissionRows) {
  test(`allowsModel: ${row.name}`, () => {
    assert.deepEqual(allowsModel(row.state, row.modelId), row.expected);
  });
}
