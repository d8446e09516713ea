import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scanBody, withTopLevelString } from '#src/proxy/request/raw-json.ts';

function rewrite(text: string, value: string): string {
  const raw = Buffer.from(text);
  return withTopLevelString(raw, scanBody(raw, 'model'), 'model', value).toString('utf8');
}

test('the model value is replaced in place; every other byte stays', () => {
  const table: [string, string][] = [
    ['{"model":"a","seed":9007199254740993}', '{"model":"B","seed":9007199254740993}'],
    ['{ "x": 1e400 , "model" : "a" }', '{ "x": 1e400 , "model" : "B" }'],
    ['{"model":null}', '{"model":"B"}'],
    ['{"model":""}', '{"model":"B"}'],
    ['{"a":{"model":"inner"},"model":"a"}', '{"a":{"model":"inner"},"model":"B"}'],
    ['{"model":"a","b":[1,{"model":"x"}],"model":"dup"}', '{"model":"B","b":[1,{"model":"x"}],"model":"B"}'],
    ['{"mod\\u0065l":"a"}', '{"mod\\u0065l":"B"}'],
    ['{"s":"\\"model\\":","model":"a"}', '{"s":"\\"model\\":","model":"B"}'],
    ['{"messages":[],"n":-0.0}', '{"model":"B","messages":[],"n":-0.0}'],
    ['{}', '{"model":"B"}'],
    [' \n{ }', ' \n{"model":"B" }'],
    ['{"model":"a","k":"ünïcode ✓"}', '{"model":"B","k":"ünïcode ✓"}'],
    // Strings end at the first quote after an even run of backslashes (strings are skipped natively).
    ['{"s":"x\\\\","model":"a"}', '{"s":"x\\\\","model":"B"}'],
    ['{"s":"\\\\\\\"model\\\":[{","model":"a"}', '{"s":"\\\\\\\"model\\\":[{","model":"B"}'],
    ['{"s":"' + 'long prompt '.repeat(1000) + '","model":"a"}', '{"s":"' + 'long prompt '.repeat(1000) + '","model":"B"}'],
    ['{"model\\\\":"k","model":"a"}', '{"model\\\\":"k","model":"B"}'],
    ['{"modem":"k","model":"a"}', '{"modem":"k","model":"B"}'],
  ];
  for (const [input, expected] of table) {
    assert.deepEqual(JSON.parse(expected), { ...JSON.parse(input), model: 'B' }, input);
    assert.equal(rewrite(input, 'B'), expected, input);
  }
});

test('the new value is JSON-encoded', () => {
  assert.equal(rewrite('{"model":"a"}', 'we"ird\\'), '{"model":"we\\"ird\\\\"}');
});

test('depth: arrays and objects past the limit are flagged, strings do not count', () => {
  const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
  const table: [string, number, boolean][] = [
    [`{"a":${nested(3)}}`, 4, false],
    [`{"a":${nested(4)}}`, 4, true],
    ['{"a":"[[[[[[[[[[[["}', 2, false],
    [`{"a":{"b":{"c":{}}}}`, 4, false],
    [`{"a":{"b":{"c":{"d":1}}}}`, 3, true],
  ];
  for (const [text, limit, tooDeep] of table) assert.equal(scanBody(Buffer.from(text), 'model', limit).tooDeep, tooDeep, text);
  assert.equal(scanBody(Buffer.from(`{"p":${nested(200_000)}}`), 'model').tooDeep, true);
});

test('a key beyond ASCII is found by its UTF-8 bytes, written plainly or escaped', () => {
  const table: [string, number][] = [
    ['{"modèle":"a","modele":"b"}', 1],
    ['{"mod\\u00e8le":"a","x":{"modèle":"inner"}}', 1],
    ['{"modèl":"a","modèlex":"b"}', 0],
    ['{"字":1,"字":2}', 2],
  ];
  for (const [input, found] of table) {
    const key = input.includes('字') ? '字' : 'modèle';
    const scan = scanBody(Buffer.from(input), key);
    assert.equal(scan.valueSpans.length, found, input);
    const raw = Buffer.from(input);
    for (const [start, end] of scan.valueSpans)
      assert.ok(['"a"', '1', '2'].includes(raw.subarray(start, end).toString('utf8')), input);
  }
});

test('case variants of the key are found as a case-insensitive decoder (Go) would read them, plain, escaped or beyond ASCII', () => {
  const variants = (text: string, key = 'model'): readonly string[] => scanBody(Buffer.from(text), key).variantKeys;
  assert.deepEqual(variants('{"model":"a"}'), []);
  assert.deepEqual(variants('{"Model":"a","model":"b","MODEL":"c"}'), ['Model', 'MODEL']);
  assert.deepEqual(variants('{"\\u004dODEL":1}'), ['MODEL']);
  assert.deepEqual(variants('{"a":{"Model":1},"b":["Model"],"Models":2,"mode":3}'), [], 'nested, longer, shorter: not the key');
  // Unicode simple folding, as Go's encoding/json folds: the Kelvin sign is a k, the long s an s.
  assert.deepEqual(variants('{"\u212Aind":1,"\\u212aind":2}', 'kind'), ['\u212Aind', '\u212Aind']);
  assert.deepEqual(variants('{"\u017Ftream":true}', 'stream'), ['\u017Ftream']);
  // The exact key, written with an escape, is the key itself (its value is a value span).
  const escaped = scanBody(Buffer.from('{"mod\\u0065l":"a","Model":"b"}'), 'model');
  assert.equal(escaped.valueSpans.length, 1);
  assert.deepEqual(escaped.variantKeys, ['Model']);
});

test('casedKeys: set only when a key, at any depth, has an upper-case letter, an escape or a byte beyond ASCII', () => {
  const cased = (text: string): boolean => scanBody(Buffer.from(text), 'model').casedKeys;
  assert.equal(
    cased('{"model":"A","messages":[{"role":"X","content":"Hello \\"World\\": Yes"}],"max_tokens":3}'),
    false,
    'values do not count',
  );
  assert.equal(cased('{"model":"a","messages":[{"Role":"x"}],"max_tokens":3}'), true, 'a nested key counts');
  assert.equal(cased('{"model":"a","options":{"num_pr\\u0065dict":3}}'), true, 'a nested escape counts');
  assert.equal(cased('{"model":"a","messages":["A", "B" ],"stop":["X" , "Y"]}'), false, 'strings in arrays are values');
  assert.equal(cased('{"model":"a","options":{"NUM_PREDICT" : 3}}'), true, 'spaces before the colon');
  assert.equal(cased('{"model":"a","Max_Tokens":3}'), true);
  assert.equal(cased('{"mod\\u0065l":"a"}'), true);
  assert.equal(cased('{"modèle":"a"}'), true);
});
