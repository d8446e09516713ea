import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminAccess, cameThroughProxy, PROXY_MARKER_HEADERS, type AdminRequestFacts } from '#src/admin/admin-access.ts';

const base: AdminRequestFacts = { tokenSet: false, tokenMatches: false, mutation: false, fromLoopback: false, viaProxy: false };

test('who may use an admin route', () => {
  const table: [string, Partial<AdminRequestFacts>, 'allowed' | 401 | 403][] = [
    ['no token: a read from anywhere', {}, 'allowed'],
    ['no token: a proxied read', { viaProxy: true, fromLoopback: true }, 'allowed'],
    ['no token: a change from loopback', { mutation: true, fromLoopback: true }, 'allowed'],
    ['no token: a change from elsewhere', { mutation: true }, 403],
    ['no token: a change from loopback through a proxy', { mutation: true, fromLoopback: true, viaProxy: true }, 403],
    ['token: a read without it', { tokenSet: true, fromLoopback: true }, 401],
    ['token: a change without it, even from loopback', { tokenSet: true, mutation: true, fromLoopback: true }, 401],
    ['token: a read with it', { tokenSet: true, tokenMatches: true }, 'allowed'],
    ['token: a proxied change with it', { tokenSet: true, tokenMatches: true, mutation: true, viaProxy: true }, 'allowed'],
  ];
  for (const [what, facts, expected] of table) {
    const access = adminAccess({ ...base, ...facts });
    assert.equal(access.allowed ? 'allowed' : access.status, expected, what);
  }
});

test('a refusal behind a proxy says that a token is required there', () => {
  const access = adminAccess({ ...base, mutation: true, fromLoopback: true, viaProxy: true });
  assert.ok(!access.allowed);
  assert.match(access.message, /proxy/);
  assert.match(access.message, /\[admin\] token/);
});

test('any forwarding header marks a request as proxied', () => {
  for (const name of PROXY_MARKER_HEADERS) assert.equal(cameThroughProxy({ [name]: 'x' }), true, name);
  assert.equal(cameThroughProxy({ host: '127.0.0.1', 'user-agent': 'curl' }), false);
});
