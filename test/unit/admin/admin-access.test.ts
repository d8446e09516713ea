import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminAccess, cameThroughProxy, PROXY_MARKER_HEADERS, type AdminRequestFacts } from '#src/admin/admin-access.ts';
import { hostName, hostVerdict } from '#src/admin/admin-host.ts';
import { isJsonContentType, isOwnOrigin } from '#src/admin/admin-origin.ts';

const NAMES = { configured: ['gw.example.com'], listen: ['gw.internal'], machine: 'box7' };
const base: AdminRequestFacts = {
  route: 'read',
  tokenSet: false,
  tokenMatches: false,
  fromLoopback: false,
  viaProxy: false,
  host: '127.0.0.1:9090',
  origin: undefined,
  fetchSite: undefined,
  contentType: undefined,
  hasBody: false,
  hostNames: NAMES,
};
const change: Partial<AdminRequestFacts> = { route: 'change', fromLoopback: true };

test('who may use an admin route', () => {
  const table: [string, Partial<AdminRequestFacts>, 'allowed' | 401 | 403][] = [
    ['no token: a read from anywhere', {}, 'allowed'],
    ['no token: a proxied read', { viaProxy: true, fromLoopback: true }, 'allowed'],
    ['no token: a change from loopback', { route: 'change', fromLoopback: true }, 'allowed'],
    ['no token: a change from elsewhere', { route: 'change' }, 403],
    ['no token: a change from loopback through a proxy', { route: 'change', fromLoopback: true, viaProxy: true }, 403],
    ['token: a read without it', { tokenSet: true, fromLoopback: true }, 401],
    ['token: a change without it, even from loopback', { tokenSet: true, route: 'change', fromLoopback: true }, 401],
    ['token: a read with it', { tokenSet: true, tokenMatches: true }, 'allowed'],
    ['token: a proxied change with it', { tokenSet: true, tokenMatches: true, route: 'change', viaProxy: true }, 'allowed'],
    ['token: the dashboard page without it', { tokenSet: true, route: 'page' }, 'allowed'],
  ];
  for (const [what, facts, expected] of table) {
    const access = adminAccess({ ...base, ...facts });
    assert.equal(access.allowed ? 'allowed' : access.status, expected, what);
  }
});

test('admin routes answer only for an expected Host: IP literals, loopback names, listen and configured names', () => {
  const table: [string | undefined, boolean][] = [
    ['127.0.0.1:9090', true],
    ['10.1.2.3', true],
    ['[::1]:9090', true],
    ['[fe80::1]', true],
    ['localhost:9090', true],
    ['LocalHost', true],
    ['dash.localhost:9090', true],
    ['gw.example.com', true],
    ['GW.Example.COM.:8443', true],
    ['gw.internal:8080', true],
    ['box7:9090', true],
    [undefined, true],
    ['evil.example', false],
    ['rebind.attacker.test:9090', false],
    ['127.0.0.1.nip.io:9090', false],
    ['localhost.attacker.test', false],
    ['example.com', false],
    ['sub.gw.example.com', false],
  ];
  for (const [host, expected] of table) assert.equal(hostVerdict(host, NAMES).expected, expected, String(host));
  assert.equal(hostName('[::1]:80'), '::1');
  assert.equal(hostName('A.B.:1'), 'a.b');
  // No machine name known: it is not matched by an empty Host either.
  assert.equal(hostVerdict('box7', { ...NAMES, machine: '' }).expected, false);
});

test('an unexpected Host is refused on every route kind and whatever the token, 421 naming the config key', () => {
  for (const route of ['page', 'read', 'change'] as const) {
    for (const token of [{}, { tokenSet: true, tokenMatches: true }]) {
      const access = adminAccess({ ...base, ...token, route, fromLoopback: true, host: 'rebind.attacker.test:9090' });
      assert.ok(!access.allowed, route);
      assert.equal(access.status, 421);
      assert.equal(access.code, 'unexpected_host');
      assert.match(access.message, /Host 'rebind\.attacker\.test'/);
      assert.match(access.message, /\[admin\] hosts = \["rebind\.attacker\.test"\]/);
    }
  }
});

test('a change a page of another origin could have sent is refused, whatever the token', () => {
  const table: [string, Partial<AdminRequestFacts>, 'allowed' | { status: number; code: string }][] = [
    ['the CLI: no Origin, no Sec-Fetch-Site, a JSON body', { contentType: 'application/json', hasBody: true }, 'allowed'],
    ['curl -X POST: no body, no content type', {}, 'allowed'],
    [
      'the dashboard: its own Origin, same-origin, JSON',
      {
        origin: 'http://127.0.0.1:9090',
        fetchSite: 'same-origin',
        contentType: 'application/json; charset=utf-8',
        hasBody: true,
      },
      'allowed',
    ],
    [
      'the dashboard: a body-less wake from its own origin',
      { origin: 'http://127.0.0.1:9090', fetchSite: 'same-origin' },
      'allowed',
    ],
    ['a user-typed request (Sec-Fetch-Site none)', { fetchSite: 'none' }, 'allowed'],
    [
      'behind a TLS proxy passing Host through',
      { host: 'gw.example.com', origin: 'https://gw.example.com', fetchSite: 'same-origin' },
      'allowed',
    ],
    [
      'an Origin on the default port, Host with it written out',
      { host: 'gw.example.com:80', origin: 'http://gw.example.com' },
      'allowed',
    ],
    ['another port on the same host', { origin: 'http://127.0.0.1:3000' }, { status: 403, code: 'cross_origin' }],
    ['another site', { origin: 'https://evil.example' }, { status: 403, code: 'cross_origin' }],
    ['the null origin', { origin: 'null' }, { status: 403, code: 'cross_origin' }],
    [
      'an Origin without a Host to compare',
      { host: undefined, origin: 'http://127.0.0.1:9090' },
      { status: 403, code: 'cross_origin' },
    ],
    ['same-site (another port of this host)', { fetchSite: 'same-site' }, { status: 403, code: 'cross_site' }],
    ['cross-site', { fetchSite: 'cross-site', origin: 'http://127.0.0.1:9090' }, { status: 403, code: 'cross_site' }],
    ['a text/plain form post', { contentType: 'text/plain', hasBody: true }, { status: 415, code: 'not_json' }],
    [
      'a urlencoded form post',
      { contentType: 'application/x-www-form-urlencoded', hasBody: true },
      { status: 415, code: 'not_json' },
    ],
    [
      'a multipart form post',
      { contentType: 'multipart/form-data; boundary=x', hasBody: true },
      { status: 415, code: 'not_json' },
    ],
    ['a body without a content type', { hasBody: true }, { status: 415, code: 'not_json' }],
    ['a non-JSON content type without a body', { contentType: 'text/plain' }, { status: 415, code: 'not_json' }],
    ['a JSON look-alike', { contentType: 'application/jsonx', hasBody: true }, { status: 415, code: 'not_json' }],
  ];
  for (const token of [{}, { tokenSet: true, tokenMatches: true }]) {
    for (const [what, facts, expected] of table) {
      const access = adminAccess({ ...base, ...change, ...token, ...facts });
      assert.deepEqual(
        access.allowed ? 'allowed' : { status: access.status, code: access.code },
        expected,
        `${what} ${JSON.stringify(token)}`,
      );
    }
  }
  // Reads are not judged by their origin: a link from another site to the dashboard opens it.
  assert.equal(adminAccess({ ...base, origin: 'https://evil.example', fetchSite: 'cross-site' }).allowed, true);
  assert.equal(adminAccess({ ...base, route: 'page', fetchSite: 'cross-site' }).allowed, true);
});

test('the browser checks come before the token: a cross-site change says why, not just "token"', () => {
  const access = adminAccess({ ...base, route: 'change', tokenSet: true, fetchSite: 'cross-site' });
  assert.ok(!access.allowed);
  assert.equal(access.code, 'cross_site');
  assert.match(access.message, /Sec-Fetch-Site is 'cross-site'/);
});

test('origins and content types', () => {
  assert.equal(isOwnOrigin('http://127.0.0.1:9090', '127.0.0.1:9090'), true);
  assert.equal(isOwnOrigin('http://[::1]:9090', '[::1]:9090'), true);
  assert.equal(isOwnOrigin('http://LOCALHOST:9090', 'localhost:9090'), true);
  assert.equal(isOwnOrigin('http://127.0.0.1:9090/path', '127.0.0.1:9090'), false);
  assert.equal(isOwnOrigin('ftp://127.0.0.1:9090', '127.0.0.1:9090'), false);
  assert.equal(isOwnOrigin('http://127.0.0.1:9091', '127.0.0.1:9090'), false);
  assert.equal(isOwnOrigin('http://127.0.0.1', '127.0.0.1:9090'), false);
  assert.equal(isJsonContentType('Application/JSON ; charset=utf-8'), true);
  assert.equal(isJsonContentType('application/json'), true);
  assert.equal(isJsonContentType('application/ld+json'), false);
});

test('a refusal behind a proxy says that a token is required there', () => {
  const access = adminAccess({ ...base, route: 'change', fromLoopback: true, viaProxy: true });
  assert.ok(!access.allowed);
  assert.match(access.message, /proxy/);
  assert.match(access.message, /\[admin\] token/);
});

test('any forwarding header marks a request as proxied', () => {
  for (const name of PROXY_MARKER_HEADERS) assert.equal(cameThroughProxy({ [name]: 'x' }), true, name);
  assert.equal(cameThroughProxy({ host: '127.0.0.1', 'user-agent': 'curl' }), false);
});
