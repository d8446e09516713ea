import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatListenAddress, parseListenAddress } from '#src/config/listen-address.ts';

describe('parseListenAddress', () => {
  const accepted: readonly (readonly [string, string, number])[] = [
    ['127.0.0.1:8080', '127.0.0.1', 8080],
    ['0.0.0.0:0', '0.0.0.0', 0],
    ['localhost:65535', 'localhost', 65_535],
    ['gateway.internal:80', 'gateway.internal', 80],
    ['[::1]:8080', '::1', 8080],
    ['[::]:9000', '::', 9000],
  ];
  for (const [text, host, port] of accepted) {
    test(`reads "${text}" as host ${host} and port ${port}`, () => {
      assert.deepEqual(parseListenAddress(text), { ok: true, value: { host, port } });
    });
  }

  const refused: readonly (readonly [string, string])[] = [
    ['localhost', 'the port is missing'],
    ['localhost:65536', 'from 0 to 65535'],
    ['localhost:-1', 'from 0 to 65535'],
    ['localhost:http', 'from 0 to 65535'],
    ['localhost:', 'from 0 to 65535'],
    [':8080', 'the host is missing'],
    ['::1:8080', 'put an IPv6 host in brackets'],
    ['[not-ipv6]:8080', 'not an IPv6 address'],
    ['bad host:8080', 'not a valid hostname'],
  ];
  for (const [text, fragment] of refused) {
    test(`refuses "${text}" saying "${fragment}"`, () => {
      const result = parseListenAddress(text);
      assert.ok(!result.ok && result.message.includes(fragment), JSON.stringify(result));
      assert.ok(!result.ok && result.message.includes('must be "host:port"'));
    });
  }
});

describe('formatListenAddress', () => {
  test('brackets an IPv6 host so the result parses back', () => {
    assert.equal(formatListenAddress({ host: '::1', port: 8080 }), '[::1]:8080');
    assert.equal(formatListenAddress({ host: '127.0.0.1', port: 0 }), '127.0.0.1:0');
  });
});
