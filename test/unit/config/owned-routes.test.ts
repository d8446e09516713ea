// The stored-response paths the owner routes read (config/owned-routes.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { responseIdOf } from '#src/config/index.ts';

test('responseIdOf: the id of /v1/responses/{id} and its input_items; nothing for any other path', () => {
  assert.equal(responseIdOf('/v1/responses/resp_1'), 'resp_1');
  assert.equal(responseIdOf('/v1/responses/resp_1/input_items'), 'resp_1');
  assert.equal(responseIdOf('/v1/responses/resp%2F1'), 'resp/1');
  assert.equal(responseIdOf('/v1/responses/'), undefined);
  assert.equal(responseIdOf('/v1/responses/resp_1/cancel'), undefined);
  assert.equal(responseIdOf('/v1/responses/%E0'), undefined);
  assert.equal(responseIdOf(`/v1/responses/${'x'.repeat(513)}`), undefined);
  assert.equal(responseIdOf('/v1/chat/completions'), undefined);
});
