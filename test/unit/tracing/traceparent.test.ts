import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatTraceparent, parseTraceparent, tracestateOf } from '#src/tracing/traceparent.ts';
import { operationOf, serverOf } from '#src/tracing/span-attributes.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

const CASES: readonly [string, string | string[] | undefined, ReturnType<typeof parseTraceparent>][] = [
  ['sampled', `00-${TRACE}-${SPAN}-01`, { traceId: TRACE, spanId: SPAN, flags: 1 }],
  ['not sampled', `00-${TRACE}-${SPAN}-00`, { traceId: TRACE, spanId: SPAN, flags: 0 }],
  ['surrounding whitespace', ` 00-${TRACE}-${SPAN}-01 `, { traceId: TRACE, spanId: SPAN, flags: 1 }],
  ['a later version with more fields', `01-${TRACE}-${SPAN}-01-extra`, { traceId: TRACE, spanId: SPAN, flags: 1 }],
  ['absent', undefined, undefined],
  ['repeated header', [`00-${TRACE}-${SPAN}-01`, `00-${TRACE}-${SPAN}-01`], undefined],
  ['version ff', `ff-${TRACE}-${SPAN}-01`, undefined],
  ['version 00 with more fields', `00-${TRACE}-${SPAN}-01-extra`, undefined],
  ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`, undefined],
  ['all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`, undefined],
  ['all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`, undefined],
  ['short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`, undefined],
  ['garbage', 'hello', undefined],
];

for (const [what, header, expected] of CASES) {
  test(`traceparent: ${what}`, () => assert.deepEqual(parseTraceparent(header), expected));
}

test('a span is written as a version-00 traceparent', () => {
  assert.equal(formatTraceparent(TRACE, SPAN, 1), `00-${TRACE}-${SPAN}-01`);
  assert.equal(formatTraceparent(TRACE, SPAN, 0), `00-${TRACE}-${SPAN}-00`);
});

test('tracestate: kept when one bounded value; repeated headers joined; too long or empty dropped', () => {
  assert.equal(tracestateOf('a=1,b=2'), 'a=1,b=2');
  assert.equal(tracestateOf(['a=1', 'b=2']), 'a=1,b=2');
  assert.equal(tracestateOf(''), undefined);
  assert.equal(tracestateOf(`a=${'x'.repeat(600)}`), undefined);
  assert.equal(tracestateOf(undefined), undefined);
});

test('gen_ai.operation.name by endpoint', () => {
  assert.equal(operationOf('/v1/chat/completions'), 'chat');
  assert.equal(operationOf('/v1/messages'), 'chat');
  assert.equal(operationOf('/v1/completions'), 'text_completion');
  assert.equal(operationOf('/v1/embeddings'), 'embeddings');
  assert.equal(operationOf('/api/embed'), 'embeddings');
  assert.equal(operationOf('/v1/rerank'), 'rerank');
});

test('server.address and server.port of a node or site URL', () => {
  assert.deepEqual(serverOf('http://127.0.0.1:8000/v1'), { 'server.address': '127.0.0.1', 'server.port': 8000 });
  assert.deepEqual(serverOf('https://gpu.example'), { 'server.address': 'gpu.example', 'server.port': 443 });
  assert.deepEqual(serverOf('http://[::1]:9000'), { 'server.address': '::1', 'server.port': 9000 });
  assert.deepEqual(serverOf('not a url'), {});
  assert.deepEqual(serverOf(undefined), {});
});
