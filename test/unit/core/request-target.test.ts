import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostProblem, parseRequestTarget } from '#src/core/request-target.ts';

test('request-targets: path and query, or a named problem', () => {
  const table: [string | undefined, string | RegExp][] = [
    ['/v1/models', '/v1/models'],
    ['/admin/explain?model=a%20b', '/admin/explain'],
    [undefined, '/'],
    ['/%', '/%'],
    ['http://host.example/health?x=1', '/health'],
    ['HTTPS://host.example/v1/models', '/v1/models'],
    ['//[/', /must not start with "\/\/"/],
    ['//a:99999/', /must not start with "\/\/"/],
    ['//%/', /must not start with "\/\/"/],
    ['http://[/', /not a valid URL/],
    ['http://a:99999/', /not a valid URL/],
    ['*', /expected a path/],
    ['host:443', /expected a path/],
    ['', /expected a path/],
  ];
  for (const [target, expected] of table) {
    const parsed = parseRequestTarget(target);
    if (typeof expected === 'string') {
      assert.ok(parsed.ok, `${target} should parse`);
      assert.equal(parsed.url.pathname, expected);
    } else {
      assert.ok(!parsed.ok, `${target} should be refused`);
      assert.match(parsed.problem, expected);
    }
  }
  const query = parseRequestTarget('/admin/explain?model=a%20b');
  assert.ok(query.ok && query.url.searchParams.get('model') === 'a b');
});

test('a huge malformed target is quoted only in part', () => {
  const parsed = parseRequestTarget(`//${'x'.repeat(10_000)}`);
  assert.ok(!parsed.ok);
  assert.ok(parsed.problem.length < 200);
});

test('a Host header is a plain host[:port] or the request is refused', () => {
  const cases: [readonly string[], boolean][] = [
    [['Host', '127.0.0.1:8080'], true],
    [['host', 'gw.example.com'], true],
    [['Host', '[::1]:8080'], true],
    [['Host', ''], true],
    [[], true],
    [['Host', '127.0.0.1:8080/v1/chat/completions#'], false],
    [['Host', 'a?b'], false],
    [['Host', 'user@host'], false],
    [['Host', 'a b'], false],
    [['Host', 'a', 'Host', 'b'], false],
  ];
  for (const [raw, ok] of cases) assert.equal(hostProblem(raw) === undefined, ok, JSON.stringify(raw));
  assert.match(hostProblem(['Host', 'x/y']) ?? '', /malformed Host header "x\/y": expected host\[:port\]/);
});
