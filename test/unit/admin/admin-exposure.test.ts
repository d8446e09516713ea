import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminOpenToNetwork } from '#src/admin/admin-exposure.ts';

test('the admin routes are open to the network only without a token, without an admin listener, on a non-loopback listener', () => {
  const table: [string, boolean, boolean, boolean][] = [
    // main host, token set, own admin listener, open
    ['0.0.0.0', false, false, true],
    ['10.0.0.5', false, false, true],
    ['::', false, false, true],
    ['127.0.0.1', false, false, false],
    ['::1', false, false, false],
    ['localhost', false, false, false],
    ['0.0.0.0', true, false, false],
    ['0.0.0.0', false, true, false],
  ];
  for (const [mainHost, tokenSet, ownListener, open] of table) {
    assert.equal(
      adminOpenToNetwork({ mainHost, tokenSet, ownListener }),
      open,
      `${mainHost} token=${tokenSet} listener=${ownListener}`,
    );
  }
});
