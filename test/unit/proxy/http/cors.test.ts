// The CORS decisions for the public endpoints, as tables over plain data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allowedOrigin, answerCorsHeaders, preflightHeaders, sameCorsOrigins, withCors } from '#src/proxy/http/cors.ts';
import { lookupPath, subtree, TableBuilder, type Handler } from '#src/proxy/http/server.ts';
import { modelIdOf, retrieveModel } from '#src/proxy/inference/model-retrieve.ts';
import { GatewayError } from '#src/core/errors.ts';
import type { FleetModel } from '#src/proxy/request/models-list.ts';

const A = 'https://a.example';

test('allowedOrigin: off, "*", a list; no Origin never gets one', () => {
  const table: [readonly string[] | '*', string | undefined, string | undefined][] = [
    [[], A, undefined],
    ['*', A, '*'],
    ['*', undefined, undefined],
    [[A], A, A],
    [[A], 'https://a.example.evil', undefined],
    [[A], 'https://A.example', undefined],
    [[A], '', undefined],
  ];
  for (const [origins, origin, expected] of table)
    assert.equal(allowedOrigin(origins, origin), expected, `${String(origins)} ${String(origin)}`);
});

test('answerCorsHeaders: Access-Control-* only for an allowed origin; with a list, Vary: Origin on every answer', () => {
  assert.deepEqual(Object.keys(answerCorsHeaders([A], A)).sort(), [
    'access-control-allow-origin',
    'access-control-expose-headers',
    'vary',
  ]);
  assert.equal(answerCorsHeaders('*', A)['vary'], undefined);
  assert.deepEqual(answerCorsHeaders([A], 'https://b.example'), { vary: 'Origin' });
  assert.deepEqual(answerCorsHeaders([A], undefined), { vary: 'Origin' });
  assert.deepEqual(answerCorsHeaders([], A), {});
});

test('preflightHeaders: methods, base and requested headers (well-formed, bounded), max-age', () => {
  const headers = preflightHeaders(
    [A],
    { origin: A, method: 'POST', headers: 'X-Stainless-OS, content-type, bad header, ' + 'x'.repeat(200) },
    ['POST', 'OPTIONS'],
  );
  assert.equal(headers['access-control-allow-origin'], A);
  assert.equal(headers['access-control-allow-methods'], 'POST, OPTIONS');
  assert.equal(headers['access-control-allow-headers'], 'authorization, content-type, x-api-key, x-request-id, x-stainless-os');
  assert.equal(headers['access-control-max-age'], '600');
  assert.deepEqual(preflightHeaders([A], { origin: A, method: undefined, headers: undefined }, ['POST']), {});
  assert.deepEqual(preflightHeaders([A], { origin: 'https://b.example', method: 'POST', headers: undefined }, ['POST']), {});
  const many = Array.from({ length: 100 }, (_, i) => `h${i}`).join(',');
  assert.equal(
    preflightHeaders('*', { origin: A, method: 'POST', headers: many }, ['POST'])['access-control-allow-headers']?.split(', ')
      .length,
    4 + 64,
  );
});

test('lookupPath: an exact path, else the nearest subtree entry above it; a path ending in "/" is only itself', () => {
  const builder = new TableBuilder();
  builder.add('GET', '/v1/models', () => undefined);
  builder.add('GET', subtree('/v1/models/'), () => undefined);
  builder.add('GET', '/admin/', () => undefined);
  const table = builder.table();
  assert.equal(lookupPath(table, '/v1/models'), table.get('/v1/models'));
  for (const path of ['/v1/models/', '/v1/models/x', '/v1/models/meta-llama/Llama-3-8B', '/v1/models/a/b/c:d'])
    assert.equal(lookupPath(table, path), table.get('/v1/models/*'), path);
  for (const path of ['/v1/model', '/v1/modelsx', '/', '/v2/models/x', '/admin/nope', '/admin/a/b'])
    assert.equal(lookupPath(table, path), undefined, path);
  assert.equal(lookupPath(table, '/admin/'), table.get('/admin/'));
});

test('retrieveModel: by id, by resolved name, else 404 with the nearest ids; modelIdOf decodes', () => {
  const entry = (id: string): FleetModel => ({
    id,
    object: 'model',
    created: 1,
    owned_by: 'switchyard',
    max_model_len: null,
    loaded: true,
    nodes: [],
    on_demand_nodes: [],
  });
  const list = [entry('llama3.2:latest'), entry('meta-llama/Llama-3-8B')];
  const resolve = (name: string): string => (name === 'llama3.2' ? 'llama3.2:latest' : name);
  assert.equal((retrieveModel(list, 'meta-llama/Llama-3-8B', resolve) as FleetModel).id, 'meta-llama/Llama-3-8B');
  assert.equal((retrieveModel(list, 'llama3.2', resolve) as FleetModel).id, 'llama3.2:latest');
  const missing = retrieveModel(list, 'llama3.3', resolve);
  assert.ok(missing instanceof GatewayError);
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.details?.['closest_models'], ['llama3.2:latest', 'meta-llama/Llama-3-8B']);
  assert.equal(modelIdOf('/v1/models/meta-llama%2FLlama-3-8B'), 'meta-llama/Llama-3-8B');
  assert.equal(modelIdOf('/v1/models/llama3.2%3Alatest'), 'llama3.2:latest');
  assert.ok(modelIdOf('/v1/models/%E0%A4%A') instanceof GatewayError);
});

test('withCors off (the default) leaves every handler as it is, nothing in front of it; OPTIONS is still answered', () => {
  const handler: Handler = () => {};
  const table = new Map([['/v1/chat/completions', new Map([['POST', handler]])]]);
  const off = withCors(table, []);
  assert.equal(off.get('/v1/chat/completions')?.get('POST'), handler);
  assert.ok(off.get('/v1/chat/completions')?.has('OPTIONS'));
  for (const origins of ['*', ['https://app.example']] as const) {
    const on = withCors(table, origins);
    assert.notEqual(on.get('/v1/chat/completions')?.get('POST'), handler, 'on: the answer headers are set first');
  }
});

test('sameCorsOrigins: a reload rebuilds the table only when the allowed origins change', () => {
  assert.ok(sameCorsOrigins([], []));
  assert.ok(sameCorsOrigins('*', '*'));
  assert.ok(sameCorsOrigins(['https://a.example', 'https://b.example'], ['https://a.example', 'https://b.example']));
  assert.ok(!sameCorsOrigins([], '*'));
  assert.ok(!sameCorsOrigins('*', ['https://a.example']));
  assert.ok(!sameCorsOrigins(['https://a.example'], ['https://b.example']));
  assert.ok(!sameCorsOrigins(['https://a.example'], ['https://a.example', 'https://b.example']));
});
