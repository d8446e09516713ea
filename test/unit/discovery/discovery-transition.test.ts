import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  configuredModelWarnings,
  describeTransition,
  initialDiscoveryState,
  nextDiscoveryState,
  type DiscoveryResult,
  type DiscoveryState,
  type DiscoveryTransition,
} from '#src/discovery/discovery-state.ts';
import type { DiscoveredModel } from '#src/discovery/discovered-model.ts';

const NOW = 5_000;

function model(id: string, fields: Partial<DiscoveredModel> = {}): DiscoveredModel {
  return { id, loaded: true, status: undefined, contextTokens: undefined, aliases: [], ...fields };
}

function state(fields: Partial<DiscoveryState>): DiscoveryState {
  return { ...initialDiscoveryState(1_000), ...fields };
}

const listed = (...ids: string[]): DiscoveryResult => ({ ok: true, models: ids.map((id) => model(id)) });
const EMPTY = listed();
const FAILED: DiscoveryResult = { ok: false, reason: 'error', error: 'GET http://n/v1/models answered HTTP 500' };
const failedEvent = { level: 'warn', error: 'GET http://n/v1/models answered HTTP 500' } as const;

interface Row {
  readonly name: string;
  readonly prev: DiscoveryState;
  readonly result: DiscoveryResult;
  readonly failThreshold?: number;
  readonly expected: DiscoveryTransition | undefined;
}

// `next` is always computed by nextDiscoveryState, so each row is a transition that can happen.
const rows: readonly Row[] = [
  {
    name: 'untried to known says models discovered, listing them',
    prev: state({}),
    result: listed('b', 'a'),
    expected: { message: 'models discovered', level: 'info', added: ['a', 'b'] },
  },
  {
    name: 'known_empty to known says models discovered',
    prev: state({ phase: 'known_empty', empties: 2 }),
    result: listed('a'),
    expected: { message: 'models discovered', level: 'info', added: ['a'] },
  },
  {
    name: 'known to known with new ids says the list changed',
    prev: state({ phase: 'known', models: [model('a')] }),
    result: listed('a', 'c', 'b'),
    expected: { message: 'node model list changed', level: 'info', added: ['b', 'c'], removed: [] },
  },
  {
    name: 'known to known with ids gone says the list changed',
    prev: state({ phase: 'known', models: [model('a'), model('b')] }),
    result: listed('b'),
    expected: { message: 'node model list changed', level: 'info', added: [], removed: ['a'] },
  },
  {
    name: 'known to known with the same ids says nothing',
    prev: state({ phase: 'known', models: [model('a'), model('b')] }),
    result: listed('b', 'a'),
    expected: undefined,
  },
  {
    name: 'known to known with only load status changed says nothing',
    prev: state({ phase: 'known', models: [model('a', { loaded: false, status: 'unloaded' })] }),
    result: { ok: true, models: [model('a', { status: 'loaded' })] },
    expected: undefined,
  },
  {
    name: 'a single empty listing says nothing',
    prev: state({ phase: 'known', models: [model('a')] }),
    result: EMPTY,
    expected: undefined,
  },
  {
    name: 'the second empty listing says the node reports no models',
    prev: state({ phase: 'known', models: [model('a')], empties: 1 }),
    result: EMPTY,
    expected: { message: 'node reports no models', level: 'warn' },
  },
  {
    name: 'expired to known_empty says the node reports no models',
    prev: state({ phase: 'expired', fails: 0, empties: 1 }),
    result: EMPTY,
    expected: { message: 'node reports no models', level: 'warn' },
  },
  {
    name: 'known_empty staying known_empty says nothing',
    prev: state({ phase: 'known_empty', empties: 2 }),
    result: EMPTY,
    expected: undefined,
  },
  {
    name: 'the first failure of a known node says discovery failed',
    prev: state({ phase: 'known', models: [model('a')] }),
    result: FAILED,
    expected: { message: 'model discovery failed', ...failedEvent },
  },
  {
    name: 'the first failure of a known_empty node says discovery failed',
    prev: state({ phase: 'known_empty', empties: 2 }),
    result: FAILED,
    expected: { message: 'model discovery failed', ...failedEvent },
  },
  {
    name: 'the first failure of an untried node says discovery failed',
    prev: state({}),
    result: FAILED,
    expected: { message: 'model discovery failed', ...failedEvent },
  },
  {
    name: 'a repeated failure of a degraded node says nothing',
    prev: state({ phase: 'degraded', models: [model('a')], fails: 1 }),
    result: FAILED,
    expected: undefined,
  },
  {
    name: 'a repeated failure of an untried node says nothing',
    prev: state({ fails: 1 }),
    result: FAILED,
    expected: undefined,
  },
  {
    name: 'the failure that reaches the threshold says discovery expired',
    prev: state({ phase: 'degraded', models: [model('a')], fails: 2 }),
    result: FAILED,
    expected: { message: 'model discovery expired', ...failedEvent },
  },
  {
    name: 'a failure that is both the first and the expiring one says only expired',
    prev: state({ phase: 'known', models: [model('a')] }),
    result: FAILED,
    failThreshold: 1,
    expected: { message: 'model discovery expired', ...failedEvent },
  },
  {
    name: 'a failure of an expired node says nothing',
    prev: state({ phase: 'expired', models: [model('a')], fails: 3 }),
    result: FAILED,
    expected: undefined,
  },
  {
    name: 'degraded to known with the same ids says recovered',
    prev: state({ phase: 'degraded', models: [model('a')], fails: 2 }),
    result: listed('a'),
    expected: { message: 'model discovery recovered', level: 'info' },
  },
  {
    name: 'expired to known with other ids says recovered, with the differences',
    prev: state({ phase: 'expired', models: [model('a'), model('b')], fails: 3 }),
    result: listed('a', 'c'),
    expected: { message: 'model discovery recovered', level: 'info', added: ['c'], removed: ['b'] },
  },
];

for (const row of rows) {
  test(`describeTransition: ${row.name}`, () => {
    const next = nextDiscoveryState(row.prev, row.result, NOW, { failThreshold: row.failThreshold ?? 3 });
    assert.deepEqual(describeTransition(row.prev, next), row.expected);
  });
}

test('describeTransition: a run of results logs once per state change and never per poll', () => {
  const results = [listed('a'), listed('a'), FAILED, FAILED, FAILED, FAILED, listed('a'), EMPTY, EMPTY, EMPTY];
  let current = initialDiscoveryState(0);
  const messages: string[] = [];
  for (const result of results) {
    const next = nextDiscoveryState(current, result, NOW, { failThreshold: 3 });
    const event = describeTransition(current, next);
    if (event !== undefined) messages.push(event.message);
    current = next;
  }
  assert.deepEqual(messages, [
    'models discovered',
    'model discovery failed',
    'model discovery expired',
    'model discovery recovered',
    'node reports no models',
  ]);
});

interface WarningRow {
  readonly name: string;
  readonly prev: readonly string[];
  readonly next: readonly string[];
  readonly expected: readonly string[];
  readonly want: readonly string[];
}

const warningRows: readonly WarningRow[] = [
  {
    name: 'warns about a configured id missing from the first listing',
    prev: [],
    next: ['a'],
    expected: ['a', 'b'],
    want: ['b'],
  },
  {
    name: 'warns about a configured id the new listing dropped',
    prev: ['a', 'b'],
    next: ['a'],
    expected: ['a', 'b'],
    want: ['b'],
  },
  {
    name: 'warns again about a still-missing id when the list changes',
    prev: ['a'],
    next: ['a', 'c'],
    expected: ['b'],
    want: ['b'],
  },
  { name: 'says nothing when the id set is unchanged', prev: ['a'], next: ['a'], expected: ['b'], want: [] },
  { name: 'says nothing when every configured id is served', prev: ['a'], next: ['a', 'b'], expected: ['a', 'b'], want: [] },
  { name: 'names a configured id once even if configured twice', prev: [], next: ['a'], expected: ['b', 'b'], want: ['b'] },
  { name: 'does not treat an alias as serving a configured id', prev: [], next: ['a'], expected: ['gemma'], want: ['gemma'] },
];

for (const row of warningRows) {
  test(`configuredModelWarnings: ${row.name}`, () => {
    const toModels = (ids: readonly string[]): DiscoveredModel[] =>
      ids.map((id) => model(id, { aliases: id === 'a' ? ['gemma'] : [] }));
    assert.deepEqual(configuredModelWarnings(toModels(row.prev), toModels(row.next), row.expected), row.want);
  });
}
