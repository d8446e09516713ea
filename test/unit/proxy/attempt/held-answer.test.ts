// Holding an answer: the shared budget on the bytes held, and a held JSON answer checked and read
// for its usage without being built — exactly what JSON.parse(bytes.toString('utf8')) accepts and
// reads, compared on a table and on many generated bodies, broken and whole.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { isRecord } from '#src/core/is-record.ts';
import { HeldBytesBudget, jsonMembers, NOT_JSON } from '#src/proxy/attempt/held-answer.ts';
import { STATED_USAGE_MEMBERS } from '#src/proxy/attempt/usage-reader.ts';

test('reservations share one limit; what does not fit is refused and not reserved', () => {
  const budget = new HeldBytesBudget(100);
  const a = budget.open();
  const b = budget.open();
  assert.equal(a.take(60), true);
  assert.equal(b.take(50), false);
  assert.equal(budget.held(), 60);
  assert.equal(b.take(40), true);
  assert.equal(budget.held(), 100);
  a.release();
  assert.equal(budget.held(), 40);
  a.release();
  assert.equal(budget.held(), 40, 'a second release returns nothing twice');
  assert.equal(a.take(1), false, 'a released reservation takes no more');
  b.release();
  assert.equal(budget.held(), 0);
});

test('a new limit applies at the next reservation (a reload applies to the next bytes)', () => {
  const budget = new HeldBytesBudget(10);
  const r = budget.open();
  assert.equal(r.take(20), false);
  budget.setLimit(30);
  assert.equal(r.take(20), true);
});

/** What JSON.parse of the decoded body gives: NOT_JSON where it throws, else the wanted top-level members of an object. */
function parsedMembers(bytes: Buffer, wanted: readonly string[]): Record<string, unknown> | undefined | typeof NOT_JSON {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return NOT_JSON;
  }
  if (!isRecord(value)) return undefined;
  const members: Record<string, unknown> = {};
  for (const name of wanted) if (Object.hasOwn(value, name)) members[name] = value[name];
  return members;
}

function sameAsJsonParse(bytes: Buffer, label: string): void {
  assert.deepStrictEqual(jsonMembers(bytes, STATED_USAGE_MEMBERS), parsedMembers(bytes, STATED_USAGE_MEMBERS), label);
}

const BODIES: readonly (string | Buffer)[] = [
  // Answers as nodes send them.
  '{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hi \\ \\"there\\" \\u00e9\\n"},"finish_reason":"stop"}],"usage":{"prompt_tokens":14,"completion_tokens":8,"total_tokens":22}}',
  '{"object":"response","id":"resp_1","output":[],"usage":{"input_tokens":77,"output_tokens":5}}',
  '{"model":"m","message":{"role":"assistant","content":"x"},"done":true,"prompt_eval_count":26,"eval_count":282}',
  '{"model":"m","response":"text","done":true,"eval_count":4}',
  '{"choices":[],"timings":{"prompt_n":1,"cache_n":12,"predicted_n":6}}',
  ' \t\r\n{ "usage" : { "prompt_tokens" : 1e2 , "completion_tokens" : -0 } , "usage" : null } \n',
  '{"us\\u0061ge":{"prompt_tokens":3},"\\u0069d":"x"}',
  '{"usage":{},"id":[],"object":{"a":[[],{}]},"done":false,"timings":[1,2.5e-3,-0.0E+1]}',
  '{}',
  '[]',
  '[{"usage":{"prompt_tokens":1}}]',
  '"usage"',
  '0',
  '-1.5e9',
  'null',
  'true',
  'false',
  `{"deep":${'['.repeat(40)}${']'.repeat(40)},"usage":{"prompt_tokens":2}}`,
  `${'['.repeat(200_000)}${']'.repeat(200_000)}`,
  Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22, 0xe2, 0x82, 0x22, 0x7d]), // a cut UTF-8 sequence in a string
  Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), // bytes that are no UTF-8, in a key
  Buffer.from('{"id":"h\u00e9llo \u2028 \ud83d\ude00"}', 'utf8'),
  // Not JSON.
  '',
  ' ',
  '{',
  '}',
  '{"a":1,}',
  '[1,]',
  '{"a" 1}',
  '{"a":1 "b":2}',
  '{a:1}',
  "{'a':1}",
  '{"a":01}',
  '{"a":1.}',
  '{"a":.5}',
  '{"a":+1}',
  '{"a":1e}',
  '{"a":-}',
  '{"a":NaN}',
  '{"a":tru}',
  '{"a":truee}',
  '{"a":"\\x"}',
  '{"a":"\\u12G4"}',
  '{"a":"tab\there"}',
  '{"a":"line\nbreak"}',
  '{"a":"unterminated}',
  '{"usage":{"prompt_tokens":1}}x',
  '{"usage":{"prompt_tokens":1}}{}',
  '{"usage":{"prompt_tokens":1]}',
  '[1}',
  '1,2',
  '{},{}',
  '{"usage":{"prompt_tokens":1}},',
  '\f{}',
  '{"a":1}\f',
  '{\u000b"a":1}',
  '\ufeff{}',
  '{}\u00a0',
  Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), // a byte-order mark
  Buffer.from([0x7b, 0x7d, 0x00]),
];

test('a held JSON body is accepted and read exactly as JSON.parse reads it', () => {
  for (const body of BODIES) {
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    sameAsJsonParse(bytes, JSON.stringify(bytes.toString('latin1').slice(0, 120)));
  }
});

/** A small deterministic generator (mulberry32): the same bodies on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KEYS = [...STATED_USAGE_MEMBERS, 'choices', 'model', 'prompt_tokens', 'completion_tokens', 'us\\u0061ge', ''];
const TEXTS = ['', 'x', 'é', '\\"', '\\\\', '\\u00e9', '\\n', 'a b', '\u{1f600}'];

function value(next: () => number, depth: number): string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const space = (): string => pick(['', '', ' ', '\n', '\t ', '\r\n']);
  const kind = depth > 4 ? Math.floor(next() * 4) : Math.floor(next() * 6);
  switch (kind) {
    case 0:
      return pick(['0', '-0', '7', '123', '-4.25', '1e3', '2E-2', '0.5e+1', '9007199254740993', '1e400']);
    case 1:
      return `"${pick(TEXTS)}${pick(TEXTS)}"`;
    case 2:
      return pick(['true', 'false', 'null']);
    case 3:
      return `"${pick(KEYS)}"`;
    case 4: {
      const items = Array.from({ length: Math.floor(next() * 4) }, () => `${space()}${value(next, depth + 1)}${space()}`);
      return `[${items.join(',')}${items.length === 0 ? space() : ''}]`;
    }
    default: {
      const members = Array.from(
        { length: Math.floor(next() * 5) },
        () => `${space()}"${pick(KEYS)}"${space()}:${space()}${value(next, depth + 1)}${space()}`,
      );
      return `{${members.join(',')}${members.length === 0 ? space() : ''}}`;
    }
  }
}

/** Bytes a broken body may have in place of another: JSON's own, and what JSON forbids. */
const NOISE = [...'{}[]:,"\\ \n\t0123456789-+.eEtrufalsn']
  .map((c) => c.charCodeAt(0))
  .concat([0x00, 0x0b, 0x0c, 0x1f, 0x7f, 0x80, 0xa0, 0xc3, 0xe2, 0xff, 0x27, 0x78]);

test('generated bodies, whole and broken, are accepted and read exactly as JSON.parse reads them', () => {
  const next = random(39);
  for (let n = 0; n < 4000; n += 1) {
    const whole = Buffer.from(
      `${next() < 0.5 ? ' ' : ''}{${value(next, 1).slice(1, -1) || ''}}`.replace(/^ ?\{\}$/, '{}'),
      'utf8',
    );
    const body = next() < 0.3 ? Buffer.from(value(next, 0), 'utf8') : whole;
    sameAsJsonParse(body, `whole #${n}: ${body.toString('latin1')}`);
    const broken = Buffer.from(body);
    const changes = 1 + Math.floor(next() * 3);
    let bytes = broken;
    for (let k = 0; k < changes && bytes.length > 0; k += 1) {
      const at = Math.floor(next() * bytes.length);
      const noise = NOISE[Math.floor(next() * NOISE.length)] as number;
      const how = next();
      if (how < 0.4) bytes[at] = noise;
      else if (how < 0.7) bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1)]);
      else bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from([noise]), bytes.subarray(at)]);
    }
    sameAsJsonParse(bytes, `broken #${n}: ${bytes.toString('latin1')}`);
  }
});
