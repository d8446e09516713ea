// The embeddings `encoding_format` as the sims read it: float is the array, base64 the bytes of the
// little-endian float32 vector; each kind refuses (or ignores) other values as the real server does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeEmbedding, requestedEncoding } from '#src/sim/embedding-encoding.ts';
import { embeddingVector } from '#src/sim/synthetic-output.ts';
import { vllmDialect } from '#src/sim/kinds/vllm-dialect.ts';
import { llamaDialect } from '#src/sim/kinds/llamacpp-dialect.ts';
import { ollamaDialect } from '#src/sim/kinds/ollama-dialect.ts';
import { sglangDialect } from '#src/sim/kinds/sglang-dialect.ts';

test('requestedEncoding: absent, null and "float" are float; "base64" is base64; anything else is unknown', () => {
  const table: [unknown, string | undefined][] = [
    [undefined, 'float'],
    [null, 'float'],
    ['float', 'float'],
    ['base64', 'base64'],
    ['Base64', undefined],
    [1, undefined],
    ['', undefined],
  ];
  for (const [value, expected] of table) assert.equal(requestedEncoding(value), expected, String(value));
});

test('base64 is the little-endian float32 bytes, and decodes to the exact float vector', () => {
  assert.equal(encodeEmbedding([1, -2], 'base64'), Buffer.from([0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]).toString('base64'));
  const vector = embeddingVector('some text');
  const bytes = Buffer.from(String(encodeEmbedding(vector, 'base64')), 'base64');
  assert.equal(bytes.length, vector.length * 4);
  assert.deepEqual(Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, vector.length)), vector);
  assert.equal(encodeEmbedding(vector, 'float'), vector);
});

test('every element of a sim vector is exactly a float32', () => {
  for (const x of embeddingVector('x')) assert.equal(Math.fround(x), x);
});

test('each kind reads an unknown encoding_format as its real server does', () => {
  const random = (): number => 0.5;
  const vllm = vllmDialect(random).embeddingEncoding('int8');
  assert.ok(typeof vllm !== 'string' && vllm.status === 400 && vllm.body.includes('literal_error'), JSON.stringify(vllm));
  const llama = llamaDialect(random, false).embeddingEncoding('int8');
  assert.ok(
    typeof llama !== 'string' && llama.status === 400 && llama.body.includes('Can be either float or base64'),
    JSON.stringify(llama),
  );
  assert.equal(ollamaDialect(random).embeddingEncoding('int8'), 'float');
  assert.equal(ollamaDialect(random).embeddingEncoding('base64'), 'base64');
  assert.equal(sglangDialect(random).embeddingEncoding('base64'), 'float');
  for (const dialect of [vllmDialect(random), llamaDialect(random, true)])
    assert.equal(dialect.embeddingEncoding('base64'), 'base64');
});
