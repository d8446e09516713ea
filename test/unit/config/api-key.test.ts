import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { resolveApiKey } from '#src/config/api-key.ts';

describe('resolveApiKey', () => {
  test('returns a literal key unchanged', () => {
    assert.deepEqual(resolveApiKey('sk-literal', {}), { ok: true, value: 'sk-literal' });
  });

  test('reads "env:VAR" from the environment it is given', () => {
    assert.deepEqual(resolveApiKey('env:GPU_KEY', { GPU_KEY: 'sk-from-env' }), { ok: true, value: 'sk-from-env' });
  });

  const refused: readonly (readonly [string, Record<string, string | undefined>, string])[] = [
    ['env:GPU_KEY', {}, 'environment variable GPU_KEY is not set'],
    ['env:GPU_KEY', { GPU_KEY: undefined }, 'environment variable GPU_KEY is not set'],
    ['env:GPU_KEY', { GPU_KEY: '' }, 'environment variable GPU_KEY is empty'],
    ['env:', {}, 'must be followed by an environment variable name'],
    ['env:1BAD', {}, 'must be followed by an environment variable name'],
    ['', {}, 'must not be empty'],
  ];
  for (const [value, env, fragment] of refused) {
    test(`refuses ${JSON.stringify(value)} with env ${JSON.stringify(env)} saying "${fragment}"`, () => {
      const result = resolveApiKey(value, env);
      assert.ok(!result.ok && result.message.includes(fragment), JSON.stringify(result));
    });
  }
});
