import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { normalizeNodeUrl } from '#src/config/node-url.ts';

describe('normalizeNodeUrl', () => {
  const accepted: readonly (readonly [string, string])[] = [
    ['http://10.0.0.5:8080', 'http://10.0.0.5:8080'],
    ['http://10.0.0.5:8080/', 'http://10.0.0.5:8080'],
    ['https://llm.example.com/openai/', 'https://llm.example.com/openai'],
    ['HTTP://GPU-A:8000', 'http://gpu-a:8000'],
    ['http://[::1]:8000', 'http://[::1]:8000'],
    ['http://gpu-a:80', 'http://gpu-a'],
    ['http://gpu-a/v1beta', 'http://gpu-a/v1beta'],
  ];
  for (const [text, normalized] of accepted) {
    test(`normalizes "${text}" to "${normalized}"`, () => {
      assert.deepEqual(normalizeNodeUrl(text), { ok: true, value: normalized });
    });
  }

  const refused: readonly (readonly [string, string])[] = [
    ['10.0.0.5:8080', 'must be an http(s) URL'],
    ['gpu-a', 'must be an http(s) URL'],
    ['ftp://gpu-a', 'must be an http(s) URL'],
    ['http://gpu-a:8000/?x=1', 'without a query string'],
    ['http://gpu-a:8000/?', 'without a query string'],
    ['http://gpu-a:8000/#top', 'without a fragment'],
    ['http://user:secret@gpu-a:8000', 'without credentials'],
    ['http://gpu-a:8000/v1', 'without "/v1"'],
    ['http://gpu-a:8000/v1/', 'without "/v1"'],
  ];
  for (const [text, fragment] of refused) {
    test(`refuses "${text}" saying "${fragment}"`, () => {
      const result = normalizeNodeUrl(text);
      assert.ok(!result.ok && result.message.includes(fragment), JSON.stringify(result));
    });
  }

  test('does not repeat credentials from a refused URL in its message', () => {
    const result = normalizeNodeUrl('http://user:hunter2@gpu-a:8000');
    assert.ok(!result.ok && !result.message.includes('hunter2'));
  });
});
