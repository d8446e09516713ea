import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientRequestId, MAX_REQUEST_ID_LENGTH, requestIdFor } from '#src/proxy/request/request-id.ts';

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
