import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NODE_KINDS } from '#src/config/index.ts';
import { isLlamaLike, serverKind, tokenizerFor, type ServerRole } from '#src/kinds/index.ts';

test('a node is llama-like when configured as llama.cpp or when it answered /props like one', () => {
  const roles: readonly ServerRole[] = ['unknown', 'single', 'router'];
  for (const kind of NODE_KINDS) {
    for (const role of roles) {
      assert.equal(isLlamaLike(kind, role), kind === 'llamacpp' || role !== 'unknown', `${kind} ${role}`);
    }
  }
});

test("a llama-like node is asked llama.cpp's tokenizer request, any other its kind's own", () => {
  const llama = serverKind('llamacpp').tokenize;
  assert.equal(tokenizerFor('llamacpp', 'unknown'), llama);
  assert.equal(tokenizerFor('auto', 'single'), llama);
  assert.equal(tokenizerFor('auto', 'router'), llama);
  assert.equal(tokenizerFor('auto', 'unknown'), undefined);
  assert.equal(tokenizerFor('vllm', 'unknown'), serverKind('vllm').tokenize);
  assert.equal(tokenizerFor('sglang', 'unknown'), serverKind('sglang').tokenize);
  assert.equal(tokenizerFor('ollama', 'unknown'), undefined);
  assert.equal(tokenizerFor('openai', 'unknown'), undefined);
});
