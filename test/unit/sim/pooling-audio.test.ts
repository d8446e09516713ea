// The simulators' rerank, score and transcription answers: the servers' shapes, best first, top_n,
// the missing-field refusals, and each transcription response_format.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rerankAnswer, scoreAnswer, transcriptionReply } from '#src/sim/pooling-audio.ts';

const BODY = { query: 'giant panda', documents: ['a cat', 'the giant panda', { text: 'a panda' }], top_n: 2 };

test('rerank: vLLM (Jina) and llama-server shapes, best first, cut to top_n', () => {
  const vllm = rerankAnswer('vllm', BODY, { id: 'rerank-1', model: 'r' });
  assert.ok(vllm.ok);
  const v = vllm.json as { id: string; results: { index: number; document?: { text: string }; relevance_score: number }[] };
  assert.equal(v.id, 'rerank-1');
  assert.deepEqual(
    v.results.map((r) => [r.index, r.document?.text, r.relevance_score]),
    [
      [1, 'the giant panda', 1],
      [2, 'a panda', 0.5],
    ],
  );
  const llama = rerankAnswer('llamacpp', { ...BODY, top_n: undefined }, { id: '', model: 'r' });
  assert.ok(llama.ok);
  const l = llama.json as { object: string; results: Record<string, unknown>[] };
  assert.equal(l.object, 'list');
  assert.deepEqual(
    l.results.map((r) => Object.keys(r)),
    [
      ['index', 'relevance_score'],
      ['index', 'relevance_score'],
      ['index', 'relevance_score'],
    ],
  );
  assert.deepEqual(rerankAnswer('vllm', { documents: ['a'] }, { id: '', model: 'r' }), {
    ok: false,
    message: '"query" must be provided',
  });
  assert.equal(rerankAnswer('llamacpp', { query: 'q', texts: ['q'] }, { id: '', model: 'r' }).ok, true, 'TEI texts');
});

test('score: data in the order of text_2, one text_1 or as many', () => {
  const one = scoreAnswer({ text_1: 'a b', text_2: ['a', 'c'] }, { id: 'score-1', model: 'r', created: 1 });
  assert.ok(one.ok);
  assert.deepEqual((one.json as { data: unknown[] }).data, [
    { index: 0, object: 'score', score: 0.5 },
    { index: 1, object: 'score', score: 0 },
  ]);
  assert.equal(scoreAnswer({ text_1: ['a', 'b', 'c'], text_2: ['a', 'b'] }, { id: '', model: 'r', created: 1 }).ok, false);
  assert.equal(scoreAnswer({ text_1: 'a' }, { id: '', model: 'r', created: 1 }).ok, false);
});

test('transcription: json, text, verbose_json, stream, no file', () => {
  const meta = { id: 'trsc-1', model: 'w', created: 1 };
  const form = (fields: Record<string, string>) => ({ fields, fileBytes: 3000 });
  const json = transcriptionReply(form({}), meta, 'transcribe');
  assert.equal(json.status, 200);
  assert.equal((JSON.parse(json.body) as { text: string }).text, 'the quick brown');
  const text = transcriptionReply(form({ response_format: 'text' }), meta, 'transcribe');
  assert.equal(text.headers['content-type'], 'text/plain; charset=utf-8');
  assert.equal(text.body, 'the quick brown');
  const verbose = JSON.parse(transcriptionReply(form({ response_format: 'verbose_json' }), meta, 'translate').body) as {
    task: string;
  };
  assert.equal(verbose.task, 'translate');
  const stream = transcriptionReply(form({ stream: 'true' }), meta, 'transcribe');
  assert.match(stream.headers['content-type'] ?? '', /^text\/event-stream/);
  assert.equal(stream.body.split('\n\n').filter((e) => e !== '').length, 5, 'three deltas, the stop chunk, [DONE]');
  assert.equal(transcriptionReply({ fields: {}, fileBytes: undefined }, meta, 'transcribe').status, 422);
  assert.equal(transcriptionReply(form({ response_format: 'mp3' }), meta, 'transcribe').status, 400);
});
