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

/** What the target parsed to before plain origin-form targets skipped the URL parser. */
function throughUrl(target: string): { pathname: string; search: string; query: [string, string][] } | undefined {
  if (target.startsWith('//') || !target.startsWith('/')) return undefined;
  const url = URL.parse('http://request-target.invalid' + target);
  return url === null ? undefined : { pathname: url.pathname, search: url.search, query: [...url.searchParams] };
}

function compareWithUrl(target: string): void {
  const parsed = parseRequestTarget(target);
  const expected = throughUrl(target);
  if (expected === undefined) {
    assert.ok(!parsed.ok, `${JSON.stringify(target)} should be refused`);
    return;
  }
  assert.ok(parsed.ok, `${JSON.stringify(target)} should parse`);
  assert.deepEqual(
    { pathname: parsed.url.pathname, search: parsed.url.search, query: [...parsed.url.searchParams] },
    expected,
    JSON.stringify(target),
  );
}

test('an origin-form target reads as the URL parser reads it: path, query and its parameters', () => {
  const table = [
    '/',
    '/v1/chat/completions',
    '/v1/models/meta-llama/Llama-3.1-8B',
    '/v1/models/org:model@v2',
    "/a'b",
    '/a~b!$&()*+,;=',
    '/?',
    '/v1/models?',
    '/a?b',
    '/a?b=c&d=e',
    '/a?b=%20c&d=e+f',
    '/a?b=c?d',
    '/a?x=/../y',
    "/a?b='c'",
    '/a?%zz',
    '/a?b=%E2%82%AC',
    '/.',
    '/..',
    '/a/.',
    '/a/..',
    '/a/./b',
    '/a/../b',
    '/a/.b',
    '/a/..b',
    '/a/b.',
    '/a/...',
    '/./?x',
    '/../?x',
    '/a/%2e/b',
    '/a/%2E%2e/b',
    '/%',
    '/a%20b',
    '/a b',
    '/a"b',
    '/a<b>',
    '/a`b',
    '/a{b}',
    '/a^b',
    '/a|b',
    '/a[b]',
    '/a\\b',
    '/a#b',
    '/a?b#c',
    '/é',
    '/a?é',
    '/a\tb',
    '/a?b c',
    '/a?"',
    '/a?<>',
    '/a?{}',
    '/a?[]',
    '/a?\\',
    '/a?`^|',
    '/a\u0000b',
    '/a\u007fb',
    '/a?\u007f',
    '//a',
    '//',
    '/a//b',
  ];
  for (const target of table) compareWithUrl(target);
});

test('random origin-form targets read as the URL parser reads them', () => {
  const alphabet = [
    '/',
    '/',
    '/',
    '.',
    '.',
    '?',
    '=',
    '&',
    '%',
    '2',
    'e',
    'E',
    'a',
    'b',
    '#',
    '\\',
    ' ',
    '"',
    "'",
    '<',
    '{',
    '[',
    '+',
    ':',
    '@',
    '~',
    '!',
    'é',
    '\t',
    '^',
    '|',
    '`',
  ];
  let seed = 28;
  const next = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return Math.floor((seed / 2 ** 31) * n); // the high bits (the low ones of this generator cycle)
  };
  // The second alphabet holds only what a plain target may, so most of its targets skip the parser.
  const plain = ['/', '/', '.', '.', '?', '=', '&', '%', 'a', "'", '+', ':', '@', '~'];
  for (const letters of [alphabet, plain]) {
    for (let i = 0; i < 20_000; i++) {
      let target = '/';
      for (let length = next(12); length > 0; length--) target += letters[next(letters.length)];
      compareWithUrl(target);
    }
  }
});

test('a plain origin-form target is read without the URL parser', () => {
  const parsed = parseRequestTarget('/v1/chat/completions');
  assert.ok(parsed.ok);
  assert.ok(!(parsed.url instanceof URL), 'a plain path, not a URL');
  const query = parseRequestTarget('/admin/explain?model=a');
  assert.ok(
    query.ok && !(query.url instanceof URL) && query.url.searchParams === query.url.searchParams,
    'its parameters parsed once',
  );
});
