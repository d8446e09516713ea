import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { clientRequestId, MAX_REQUEST_ID_LENGTH, requestIdFor, uuidMaker } from '#src/proxy/request/request-id.ts';

const KEPT: readonly string[] = [
  'abc',
  'a1b2-c3',
  '0af7651916cd43dd8448eb211c80319c',
  'req_01HZX:7/2+=@x.y',
  'x'.repeat(MAX_REQUEST_ID_LENGTH),
];
const REPLACED: readonly (string | string[] | undefined)[] = [
  undefined,
  '',
  'two words',
  'a"b',
  'back\\slash',
  'tab\there',
  'new\nline',
  'x'.repeat(MAX_REQUEST_ID_LENGTH + 1),
  'grüße',
  'semi;colon',
  ['a', 'b'],
];

for (const id of KEPT) {
  test(`a client id ${JSON.stringify(id.slice(0, 40))} is kept`, () => {
    assert.equal(clientRequestId(id), id);
    assert.equal(
      requestIdFor(id, () => 'new'),
      id,
    );
  });
}

for (const header of REPLACED) {
  test(`a client id ${JSON.stringify(header)?.slice(0, 40)} is replaced by a new one`, () => {
    assert.equal(clientRequestId(header), undefined);
    assert.equal(
      requestIdFor(header, () => 'new'),
      'new',
    );
  });
}

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('a made id is a random version-4 UUID, as randomUUID makes, across refills of its random bytes', () => {
  const make = uuidMaker();
  const seen = new Set<string>();
  // 128 ids per draw of random bytes: three draws and some.
  for (let i = 0; i < 3 * 128 + 5; i += 1) {
    const id = make();
    assert.match(id, V4);
    seen.add(id);
  }
  assert.equal(seen.size, 3 * 128 + 5, 'no id repeats');
  assert.match(randomUUID(), V4, 'the same shape as node:crypto randomUUID');
});

test('every hex digit of the random positions occurs: the ids are not stuck on part of the range', () => {
  const make = uuidMaker();
  const digits = new Set<string>();
  const variants = new Set<string>();
  for (let i = 0; i < 200; i += 1) {
    const id = make();
    for (const c of id.slice(0, 8)) digits.add(c);
    variants.add(id.charAt(19));
  }
  assert.equal(digits.size, 16);
  assert.deepEqual([...variants].sort(), ['8', '9', 'a', 'b']);
});

test('two makers draw their own bytes: their ids differ', () => {
  const a = uuidMaker();
  const b = uuidMaker();
  assert.notEqual(a(), b());
});
