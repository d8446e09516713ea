// The multipart model reader of the audio routes: fields in any order, a missing or repeated or
// huge `model`, a bad or missing boundary, a body cut short; the model part rewritten in place
// (an alias) with every other byte kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '#src/core/errors.ts';
import {
  boundaryOf,
  MAX_MULTIPART_FIELD_BYTES,
  readMultipartFields,
  resolveMultipartRequest,
  withModelPart,
} from '#src/proxy/request/multipart-model.ts';
import type { ModelCatalog } from '#src/proxy/request/request-model.ts';

const B = 'XyZ-boundary-42';
const CT = `multipart/form-data; boundary=${B}`;
const AUDIO = Buffer.from([0x52, 0x49, 0x46, 0x46, 0x00, 0xff, 0x0d, 0x0a, 0x2d, 0x2d, 0x80, 0x00]);

type Part = { name: string; value: string | Buffer; filename?: string };
function form(parts: readonly Part[], boundary = B): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `Content-Disposition: form-data; name="${part.name}"${part.filename === undefined ? '' : `; filename="${part.filename}"\r\nContent-Type: audio/wav`}`;
    chunks.push(
      Buffer.from(`--${boundary}\r\n${disposition}\r\n\r\n`, 'utf8'),
      typeof part.value === 'string' ? Buffer.from(part.value, 'utf8') : part.value,
      Buffer.from('\r\n', 'utf8'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`, 'utf8'));
  return Buffer.concat(chunks);
}

const catalog = (aliases: Record<string, string> = {}, defaultModel?: string): ModelCatalog => ({
  defaultModel,
  aliases: new Map(Object.entries(aliases)),
  groups: new Map(),
  policies: new Map(),
});

test('boundaryOf: only multipart/form-data with a boundary', () => {
  const table: [string, string | undefined][] = [
    [CT, B],
    ['multipart/form-data; boundary="quoted one"', 'quoted one'],
    ['Multipart/Form-Data;charset=utf-8; BOUNDARY=abc', 'abc'],
    ['multipart/form-data', undefined],
    ['application/json', undefined],
    ['multipart/mixed; boundary=abc', undefined],
    ['', undefined],
  ];
  for (const [contentType, expected] of table) assert.equal(boundaryOf(contentType), expected, contentType);
});

test('the model is read whatever the field order, the audio never parsed as text', async () => {
  const orders: Part[][] = [
    [
      { name: 'model', value: 'whisper' },
      { name: 'file', value: AUDIO, filename: 'a.wav' },
    ],
    [
      { name: 'file', value: AUDIO, filename: 'a.wav' },
      { name: 'language', value: 'en' },
      { name: 'model', value: 'whisper' },
    ],
  ];
  for (const parts of orders) {
    const read = await readMultipartFields(form(parts), CT);
    assert.ok(!(read instanceof GatewayError), String(read));
    assert.equal(read.fields.model, 'whisper');
    assert.equal(read.modelCount, 1);
    assert.equal(read.fields.file, undefined, 'a file part is not a field');
  }
});

test('bad input: each refusal is a 400 that names the problem', async () => {
  const cases: { name: string; raw: Buffer; contentType: string; message: RegExp; param?: string }[] = [
    {
      name: 'no model field',
      raw: form([{ name: 'file', value: AUDIO, filename: 'a.wav' }]),
      contentType: CT,
      message: /`model` form field/,
      param: 'model',
    },
    {
      name: 'model twice',
      raw: form([
        { name: 'model', value: 'a' },
        { name: 'model', value: 'b' },
      ]),
      contentType: CT,
      message: /more than once/,
      param: 'model',
    },
    {
      name: 'huge model',
      raw: form([{ name: 'model', value: 'm'.repeat(MAX_MULTIPART_FIELD_BYTES + 1) }]),
      contentType: CT,
      message: /`model` is longer than 65536 bytes/,
      param: 'model',
    },
    {
      name: 'no boundary',
      raw: form([{ name: 'model', value: 'a' }]),
      contentType: 'multipart/form-data',
      message: /multipart\/form-data with a boundary/,
    },
    {
      name: 'JSON sent',
      raw: Buffer.from('{"model":"a"}'),
      contentType: 'application/json',
      message: /multipart\/form-data with a boundary/,
    },
    {
      name: 'wrong boundary',
      raw: form([{ name: 'model', value: 'a' }], 'other'),
      contentType: CT,
      message: /malformed multipart|`model` form field|must open with its boundary line/,
    },
    {
      name: 'cut short',
      raw: form([
        { name: 'model', value: 'a' },
        { name: 'file', value: AUDIO, filename: 'a.wav' },
      ]).subarray(0, 150),
      contentType: CT,
      message: /malformed multipart/,
    },
  ];
  for (const c of cases) {
    const resolved = await resolveMultipartRequest(c.raw, c.contentType, catalog());
    assert.ok(resolved instanceof GatewayError, `${c.name}: refused`);
    assert.equal(resolved.status, 400, c.name);
    assert.match(resolved.message, c.message, c.name);
    if (c.param !== undefined) assert.equal(resolved.param, c.param, c.name);
  }
});

test('the body passes untouched when the model is the served name', async () => {
  const raw = form([
    { name: 'file', value: AUDIO, filename: 'a.wav' },
    { name: 'model', value: 'whisper' },
  ]);
  const resolved = await resolveMultipartRequest(raw, CT, catalog());
  assert.ok(!(resolved instanceof GatewayError));
  assert.equal(resolved.body, raw, 'the very same bytes');
  assert.equal(resolved.model, 'whisper');
  assert.equal(resolved.stream, false);
});

test('an alias rewrites the model part only; every other byte stays the client’s', async () => {
  const parts: Part[] = [
    { name: 'file', value: AUDIO, filename: 'a.wav' },
    { name: 'model', value: 'stt' },
    { name: 'stream', value: 'true' },
  ];
  const raw = form(parts);
  const resolved = await resolveMultipartRequest(raw, CT, catalog({ stt: 'openai/whisper-large-v3' }));
  assert.ok(!(resolved instanceof GatewayError));
  assert.equal(resolved.model, 'openai/whisper-large-v3');
  assert.equal(resolved.requestedModel, 'stt');
  assert.equal(resolved.stream, true);
  assert.deepEqual(
    resolved.body,
    form([parts[0] as Part, { name: 'model', value: 'openai/whisper-large-v3' }, parts[2] as Part]),
  );
});

test('models.default fills in an absent model as a new first part', async () => {
  const raw = form([{ name: 'file', value: AUDIO, filename: 'a.wav' }]);
  const resolved = await resolveMultipartRequest(raw, CT, catalog({}, 'whisper'));
  assert.ok(!(resolved instanceof GatewayError));
  assert.equal(resolved.model, 'whisper');
  assert.deepEqual(
    resolved.body,
    form([
      { name: 'model', value: 'whisper' },
      { name: 'file', value: AUDIO, filename: 'a.wav' },
    ]),
  );
});

test('withModelPart: a file part named model, or no such part, is not rewritten', () => {
  const asFile = form([{ name: 'model', value: 'a', filename: 'x' }]);
  assert.equal(withModelPart(asFile, B, 'a', 'b'), undefined);
  assert.equal(withModelPart(form([{ name: 'other', value: 'a' }]), B, 'a', 'b'), undefined);
  const preamble = Buffer.concat([Buffer.from('preamble\r\n'), form([{ name: 'model', value: 'a' }])]);
  assert.deepEqual(
    withModelPart(preamble, B, 'a', 'bb'),
    Buffer.concat([Buffer.from('preamble\r\n'), form([{ name: 'model', value: 'bb' }])]),
  );
});
