import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLoopbackAddress, keyChecker, presentedKey } from '#src/proxy/http/auth.ts';
import { keyTag } from '#src/tenants/index.ts';

test('only a configured key passes, whichever of several it is', () => {
  const check = keyChecker(['alpha-key', 'beta-key']);
  assert.equal(check('alpha-key'), true);
  assert.equal(check('beta-key'), true);
  for (const wrong of ['alpha', 'alpha-key ', 'ALPHA-KEY', '', undefined]) assert.equal(check(wrong), false, String(wrong));
  assert.equal(keyChecker([])('anything'), false);
});

test('the key is read from a Bearer authorization header or x-api-key', () => {
  assert.equal(presentedKey({ authorization: 'Bearer  sk-1 ' }), 'sk-1');
  assert.equal(presentedKey({ authorization: 'bearer sk-2' }), 'sk-2');
  assert.equal(presentedKey({ 'x-api-key': 'sk-3' }), 'sk-3');
  assert.equal(presentedKey({ authorization: 'Basic abc' }), undefined);
  assert.equal(presentedKey({}), undefined);
});

test('a key tag identifies a key without revealing it', () => {
  assert.equal(keyTag('secret').length, 8);
  assert.ok(!keyTag('secret').includes('secret'));
  assert.notEqual(keyTag('a'), keyTag('b'));
});

test('loopback means 127.0.0.0/8 and ::1, IPv4-mapped included', () => {
  for (const yes of ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1']) assert.equal(isLoopbackAddress(yes), true, yes);
  for (const no of ['10.0.0.1', '::ffff:10.0.0.1', '192.168.1.1', undefined])
    assert.equal(isLoopbackAddress(no), false, String(no));
});
