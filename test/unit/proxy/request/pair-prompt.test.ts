// The rerank/score prompt the context guard sizes: the query with the longest document (each pair
// is one sequence to a cross-encoder), whatever the number of documents.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promptText, upperBoundTokens } from '#src/proxy/request/prompt-size.ts';

test('rerank and score: the longest pair is the prompt', () => {
  const table: { endpoint: string; json: Record<string, unknown>; pieces: string[] }[] = [
    { endpoint: '/v1/rerank', json: { query: 'q', documents: ['aa', 'bbbb', 'c'] }, pieces: ['q', 'bbbb'] },
    { endpoint: '/rerank', json: { query: 'q', documents: [{ text: 'x' }, { text: 'yyy' }] }, pieces: ['q', 'yyy'] },
    { endpoint: '/v2/rerank', json: { query: 'q', documents: [] }, pieces: ['q'] },
    { endpoint: '/v1/score', json: { text_1: 'a', text_2: ['bb', 'ccc'] }, pieces: ['a', 'ccc'] },
    { endpoint: '/score', json: { queries: ['a', 'aaaa'], documents: 'd' }, pieces: ['aaaa', 'd'] },
    { endpoint: '/v1/score', json: {}, pieces: [] },
  ];
  for (const row of table)
    assert.deepEqual(promptText(row.endpoint, row.json).pieces, row.pieces, `${row.endpoint} ${JSON.stringify(row.json)}`);
});

test('a thousand short documents are not summed', () => {
  const documents = Array.from({ length: 1000 }, () => 'short document');
  const bound = upperBoundTokens(promptText('/v1/rerank', { query: 'what', documents }));
  assert.ok(bound < 100, `bound ${bound}`);
});
