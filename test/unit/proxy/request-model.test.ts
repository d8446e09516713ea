import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '#src/core/errors.ts';
import { buildCatalog, resolveRequest, type ResolvedRequest } from '#src/proxy/index.ts';

const catalog = buildCatalog({
  default: 'llama',
  available: [
    { name: 'llama', group: undefined, aliases: ['gpt-4o-mini'], policy: undefined },
    { name: 'big', group: 'gpu', aliases: [], policy: undefined },
  ],
});

function resolve(body: string): ResolvedRequest | GatewayError {
  return resolveRequest(Buffer.from(body), catalog);
}

test('a body that names a served model is forwarded byte for byte', () => {
  const raw = '{"model":"big",  "messages":[], "stream":true}';
  const out = resolve(raw);
  assert.ok(!(out instanceof GatewayError));
  assert.equal(out.body.toString(), raw);
  assert.equal(out.model, 'big');
  assert.equal(out.group, 'gpu');
  assert.equal(out.stream, true);
});

test('a missing model gets models.default injected', () => {
  const out = resolve('{"messages":[]}');
  assert.ok(!(out instanceof GatewayError));
  assert.equal(out.model, 'llama');
  assert.equal(JSON.parse(out.body.toString()).model, 'llama');
});

test('a declared alias is routed as its model and forwarded with the served id', () => {
  const out = resolve('{"model":"gpt-4o-mini"}');
  assert.ok(!(out instanceof GatewayError));
  assert.equal(out.model, 'llama');
  assert.equal(out.requestedModel, 'gpt-4o-mini');
  assert.equal(JSON.parse(out.body.toString()).model, 'llama');
});

test('bad bodies get a 400 that names the problem', () => {
  const cases: [string, RegExp][] = [
    ['{"model":', /not valid JSON/],
    ['[1,2]', /must be a JSON object/],
    ['{"model": 42}', /`model` must be a string/],
  ];
  for (const [body, message] of cases) {
    const out = resolve(body);
    assert.ok(out instanceof GatewayError, body);
    assert.equal(out.status, 400);
    assert.match(out.message, message);
  }
  const noDefault = resolveRequest(Buffer.from('{}'), buildCatalog({ default: undefined, available: [] }));
  assert.ok(noDefault instanceof GatewayError && noDefault.param === 'model');
});
