import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyBody, jsonErrorOffset, requestedModel } from '#src/sim/request-body.ts';

test('finds the offset of the first character that makes a body invalid JSON', () => {
  const cases: [string, number][] = [
    ['{"messages": [ b', 15],
    ['{"model": x', 10],
    ['{"a":1}x', 7],
    ['{', 1],
    ['', 0],
    ['{"a": "unterminated', 19],
    ['[1, 2,, 3]', 6],
  ];
  for (const [text, expected] of cases) assert.equal(jsonErrorOffset(text), expected, text);
});

test('classifies bodies as empty, JSON or invalid', () => {
  assert.deepEqual(classifyBody('  '), { kind: 'empty' });
  assert.deepEqual(classifyBody('{"a":1}'), { kind: 'json', value: { a: 1 } });
  assert.equal(classifyBody('{').kind, 'invalid');
});

test('takes the requested model from the JSON body first, then from ?model=', () => {
  assert.equal(requestedModel(classifyBody('{"model":"a"}'), { model: 'b' }), 'a');
  assert.equal(requestedModel(classifyBody('{"model":5}'), { model: 'b' }), 'b');
  assert.equal(requestedModel(classifyBody(''), {}), undefined);
});
