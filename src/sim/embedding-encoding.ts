// How an embeddings answer carries its vectors: OpenAI's `encoding_format`. `"float"` (the default)
// is a JSON array of numbers; `"base64"` is the base64 of the vector as little-endian float32, which
// real vLLM, llama.cpp and Ollama send and the official openai client decodes (it asks for base64
// whenever its caller names no format). Vectors are float32-exact, so both carry the same numbers.

export type EmbeddingEncoding = 'float' | 'base64';

/** The request's `encoding_format`: absent or null is `float`; undefined = a value no server knows. */
export function requestedEncoding(value: unknown): EmbeddingEncoding | undefined {
  if (value === undefined || value === null || value === 'float') return 'float';
  return value === 'base64' ? 'base64' : undefined;
}

/** Pure: the vector as the answer carries it in `encoding`. */
export function encodeEmbedding(vector: readonly number[], encoding: EmbeddingEncoding): readonly number[] | string {
  if (encoding === 'float') return vector;
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((x, i) => bytes.writeFloatLE(x, i * 4));
  return bytes.toString('base64');
}
