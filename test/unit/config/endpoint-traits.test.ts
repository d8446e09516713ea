import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ENDPOINT_TRAITS,
  INFERENCE_ENDPOINTS,
  TRAITS_BY_PATH,
  answersMedia,
  countsOnly,
  isAnthropicPath,
  isOllamaPath,
  takesMultipart,
} from '#src/config/index.ts';

test('every inference endpoint carries what the predicates say of it', () => {
  for (const endpoint of INFERENCE_ENDPOINTS) {
    assert.deepEqual(
      ENDPOINT_TRAITS[endpoint],
      {
        countsOnly: countsOnly(endpoint),
        takesMultipart: takesMultipart(endpoint),
        answersMedia: answersMedia(endpoint),
        anthropic: isAnthropicPath(endpoint),
        ollama: isOllamaPath(endpoint),
      },
      endpoint,
    );
  }
  assert.equal(ENDPOINT_TRAITS['/v1/messages/count_tokens'].countsOnly, true);
  assert.equal(ENDPOINT_TRAITS['/v1/chat/completions'].countsOnly, false);
});

test('a path that is no inference endpoint has no traits, whatever its name', () => {
  for (const path of ['/v1/models', '/api', 'constructor', '__proto__', 'toString', '']) {
    assert.equal(TRAITS_BY_PATH[path], undefined, path);
  }
  assert.ok(Object.isFrozen(ENDPOINT_TRAITS));
});
