// The multipart framing check (issue 38 item 1): whatever @fastify/busboy (the gateway) and
// Starlette over python-multipart (vLLM's audio routes) could read two ways is refused with a 400
// naming it — two boundaries, extended or non-UTF-8 parameters, a preamble, two dispositions, a
// disposition that is not form-data, a `model` sent as a file or in another type, a folded header,
// a boundary followed by other bytes — and a plain form passes with its `model` read once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '#src/core/errors.ts';
import { checkMultipartFraming, multipartBoundary } from '#src/proxy/request/multipart-framing.ts';

const B = 'XyZ-boundary-42';

test('the content type: one plain boundary and no other charset than UTF-8, else a 400 naming the parameter', () => {
  const ok: [string, string | undefined][] = [
    [`multipart/form-data; boundary=${B}`, B],
    ['Multipart/Form-Data;charset=utf-8; BOUNDARY=abc', 'abc'],
    ['multipart/form-data; boundary="quoted one"', 'quoted one'],
    ['multipart/form-data; boundary=abc;', 'abc'],
    ['multipart/form-data', undefined],
    ['multipart/mixed; boundary=abc', undefined],
    ['application/json', undefined],
  ];
  for (const [contentType, expected] of ok) assert.equal(multipartBoundary(contentType), expected, contentType);
  const refused: [string, RegExp][] = [
    [
      'multipart/form-data; boundary=pub; boundary=secret',
      /Content-Type has "boundary" twice: parsers differ in which one they read/,
    ],
    ['multipart/form-data; boundary=pub; Boundary=secret', /"boundary" twice/],
    ['multipart/form-data; boundary="pub"; boundary=secret', /"boundary" twice/],
    ["multipart/form-data; boundary*=utf-8''secret; boundary=pub", /extended parameter "boundary\*"/],
    ['multipart/form-data; charset=utf-16le; boundary=pub', /charset "utf-16le"/],
    ['multipart/form-data; boundary="pub\\"x"', /parsers split differently/],
    ['multipart/form-data; bound ary=secret; boundary=pub', /parsers split differently/],
    ['multipart/form-data; boundary="a"junk', /parsers split differently/],
    [`multipart/form-data; boundary=${'b'.repeat(71)}`, /1 to 70/],
  ];
  for (const [contentType, message] of refused) {
    const read = multipartBoundary(contentType);
    assert.ok(read instanceof GatewayError, `${contentType}: refused`);
    assert.equal(read.status, 400);
    assert.match(read.message, message, contentType);
  }
});

const part = (headers: string, value: string | Buffer): Buffer =>
  Buffer.concat([
    Buffer.from(`--${B}\r\n${headers}\r\n\r\n`, 'latin1'),
    typeof value === 'string' ? Buffer.from(value) : value,
    Buffer.from('\r\n'),
  ]);
const close = Buffer.from(`--${B}--\r\n`);
const field = (name: string, value: string): Buffer => part(`Content-Disposition: form-data; name="${name}"`, value);
const audio = part(
  'Content-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav',
  Buffer.from([0x52, 0x49, 0x46, 0x46, 0x0d, 0x0a, 0x2d, 0x00]),
);

test('a plain form passes, its model parts read once', () => {
  const forms: [Buffer, string[]][] = [
    [Buffer.concat([field('model', 'pub-model'), audio, close]), ['pub-model']],
    [
      Buffer.concat([
        audio,
        field('language', 'en'),
        part('Content-Disposition: form-data; name=model\r\nContent-Type: text/plain; charset=UTF-8', 'whisper'),
        close,
      ]),
      ['whisper'],
    ],
    [Buffer.concat([audio, field('Model', 'x'), close.subarray(0, close.length - 2)]), []],
    [Buffer.concat([field('model', 'a'), field('model', 'b'), close]), ['a', 'b']],
  ];
  for (const [raw, models] of forms) {
    const read = checkMultipartFraming(raw, B);
    assert.ok(!(read instanceof GatewayError), String(read));
    assert.deepEqual(
      read.modelValues.map((v) => v.toString()),
      models,
    );
  }
});

test('framing that parsers could read two ways is refused, naming it', () => {
  const cases: [string, Buffer, RegExp, string?][] = [
    [
      'a preamble',
      Buffer.concat([Buffer.from('\r\nX'), field('model', 'secret'), field('model', 'pub'), close]),
      /must open with its boundary line/,
    ],
    [
      'two Content-Disposition headers (busboy the first, Starlette the last)',
      Buffer.concat([
        part('Content-Disposition: form-data; name="language"\r\nContent-Disposition: form-data; name="model"', 'secret'),
        field('model', 'pub'),
        close,
      ]),
      /2 Content-Disposition headers/,
    ],
    ['no Content-Disposition', Buffer.concat([part('Content-Type: text/plain', 'x'), close]), /no Content-Disposition/],
    [
      'a disposition that is not form-data (busboy skips it, Starlette reads it)',
      Buffer.concat([part('Content-Disposition: attachment; name="model"', 'secret'), field('model', 'pub'), close]),
      /"attachment", not form-data/,
    ],
    [
      'name twice',
      Buffer.concat([part('Content-Disposition: form-data; name="model"; name="language"', 'secret'), close]),
      /"name" twice/,
    ],
    [
      'name* (RFC 2231)',
      Buffer.concat([part('Content-Disposition: form-data; name="language"; name*=utf-8\'\'model', 'secret'), close]),
      /"name\*"/,
    ],
    [
      'a backslash in a quoted name',
      Buffer.concat([part('Content-Disposition: form-data; name="model"; x="\\\\"; name="pub"', 'secret'), close]),
      /split differently/,
    ],
    [
      'model as a file',
      Buffer.concat([part('Content-Disposition: form-data; name="model"; filename="m.txt"', 'secret'), close]),
      /sent as a file/,
      'model',
    ],
    [
      'model as octet-stream (busboy: a file; Starlette: the field)',
      Buffer.concat([
        field('model', 'pub'),
        part('Content-Disposition: form-data; name="model"\r\nContent-Type: application/octet-stream', 'secret'),
        close,
      ]),
      /Content-Type "application\/octet-stream"/,
      'model',
    ],
    [
      'model in another charset',
      Buffer.concat([
        part('Content-Disposition: form-data; name="model"\r\nContent-Type: text/plain; charset=latin1', 'caf\xe9'),
        close,
      ]),
      /text\/plain in UTF-8/,
      'model',
    ],
    [
      'model with a transfer encoding',
      Buffer.concat([
        part('Content-Disposition: form-data; name="model"\r\nContent-Transfer-Encoding: base64', 'c2VjcmV0'),
        close,
      ]),
      /content-transfer-encoding header/,
      'model',
    ],
    [
      'model not UTF-8 (busboy U+FFFD, Starlette latin-1)',
      Buffer.concat([part('Content-Disposition: form-data; name="model"', Buffer.from([0x73, 0xff])), close]),
      /not valid UTF-8/,
      'model',
    ],
    [
      'a folded header line',
      Buffer.concat([part('Content-Disposition: form-data;\r\n name="model"', 'secret'), close]),
      /not a plain `Name: value`/,
    ],
    [
      'a space before the colon',
      Buffer.concat([part('Content-Disposition : form-data; name="model"', 'secret'), close]),
      /not a plain `Name: value`/,
    ],
    [
      'a bare LF in a header',
      Buffer.concat([part('X-A: 1\nContent-Disposition: form-data; name="model"', 'secret'), close]),
      /not a plain `Name: value`/,
    ],
    [
      'the boundary followed by other bytes',
      Buffer.concat([
        field('model', 'pub'),
        Buffer.from(`--${B}X\r\nContent-Disposition: form-data; name="model"\r\n\r\nsecret\r\n`),
        close,
      ]),
      /followed by other bytes/,
    ],
    [
      'parts after the closing boundary',
      Buffer.concat([field('model', 'pub'), close, field('model', 'secret'), close]),
      /goes on after its closing boundary/,
    ],
    ['no closing boundary', field('model', 'pub'), /no closing boundary/],
  ];
  for (const [name, raw, message, param] of cases) {
    const read = checkMultipartFraming(raw, B);
    assert.ok(read instanceof GatewayError, `${name}: refused`);
    assert.equal(read.status, 400, name);
    assert.match(read.message, message, name);
    if (param !== undefined) assert.equal(read.param, param, name);
  }
});
