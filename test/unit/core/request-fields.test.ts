// A feature's own fields of a finished request (src/core/request-fields.ts): each feature's log
// fields are laid where it says, in the feature list's order, from its own fields only; the features
// that count their fields are told of a request that carries them, and no other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  featureReports,
  fieldKey,
  fieldOf,
  observeFields,
  reportsTable,
  withFeatureLines,
  withField,
  type FinishedRequest,
} from '#src/core/request-fields.ts';

const A = fieldKey<string>('a');
const B = fieldKey<{ readonly site: string }>('b');
const LINE = { time: 't', request_id: 'r', endpoint: '/v1/x', attempts: [], status: 200 } as const;
const REQUEST: FinishedRequest = { endpoint: '/v1/x', model: 'm', node: 'n', status: 200 };

function table(seen: string[] = []) {
  return reportsTable([
    featureReports({
      key: A,
      line: { place: { after: 'endpoint' }, fields: (own) => ({ translated: own }) },
      finished: (own, request) => void seen.push(`a:${own}:${request.status}`),
    }),
    undefined,
    featureReports({
      key: B,
      line: { place: { before: 'attempts' }, fields: (own) => ({ from_site: own.site, from_x: 1 }) },
    }),
  ]);
}

test('a field set makes a new object: the fields it was set over (a shared, frozen caller’s) are left as they were', () => {
  const shared = Object.freeze({ b: { site: 's' } });
  const fields = withField(shared, A, 'x');
  assert.deepEqual(fields, { b: { site: 's' }, a: 'x' });
  assert.deepEqual(shared, { b: { site: 's' } });
  assert.equal(fieldOf(fields, A), 'x');
  assert.equal(fieldOf(undefined, A), undefined);
});

const PLACES: readonly { name: string; fields: Record<string, unknown>; keys: string[] }[] = [
  { name: 'no feature’s fields: the line as it is', fields: {}, keys: ['time', 'request_id', 'endpoint', 'attempts', 'status'] },
  {
    name: 'after an anchor',
    fields: { a: 'messages→chat' },
    keys: ['time', 'request_id', 'endpoint', 'translated', 'attempts', 'status'],
  },
  {
    name: 'before an anchor, several fields in the feature’s order',
    fields: { b: { site: 's' } },
    keys: ['time', 'request_id', 'endpoint', 'from_site', 'from_x', 'attempts', 'status'],
  },
  {
    name: 'two features: each at its place, whatever order they were set in',
    fields: { b: { site: 's' }, a: 'x' },
    keys: ['time', 'request_id', 'endpoint', 'translated', 'from_site', 'from_x', 'attempts', 'status'],
  },
  {
    name: 'a field of a feature the table does not know: not logged',
    fields: { z: 'secret' },
    keys: ['time', 'request_id', 'endpoint', 'attempts', 'status'],
  },
];

for (const c of PLACES) {
  test(`log fields: ${c.name}`, () => {
    const line = withFeatureLines(LINE, c.fields, table());
    assert.deepEqual(Object.keys(line), c.keys);
    if (c.keys.length === Object.keys(LINE).length) assert.equal(line, LINE, 'the same object: nothing built');
  });
}

test('log fields whose anchor the line lacks go at its end', () => {
  const line = withFeatureLines({ time: 't', status: 200 }, { a: 'x' }, table());
  assert.deepEqual(Object.keys(line), ['time', 'status', 'translated']);
});

test('a feature counts each request that carries its fields, and no other', () => {
  const seen: string[] = [];
  const reports = table(seen);
  observeFields(reports, REQUEST, { b: { site: 's' } });
  assert.deepEqual(seen, []);
  observeFields(reports, { ...REQUEST, status: 429 }, { a: 'x', b: { site: 's' } });
  assert.deepEqual(seen, ['a:x:429']);
});

test('a later feature’s reports of the same name replace an earlier one’s', () => {
  const later = featureReports({ key: fieldKey<string>('a') });
  assert.equal(reportsTable([...table().values(), later]).get('a'), later);
});
