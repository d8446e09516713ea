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

test('the name the nodes list replaces the configured one in the body, and [[models.available]] settings follow the declared name', () => {
  const declared = buildCatalog({ default: undefined, available: [{ name: 'llama3.2', group: 'gpu', aliases: ['friendly'], policy: 'affinity' }] });
  const served = (name: string): string => (name === 'llama3.2' ? 'llama3.2:latest' : name);
  for (const asked of ['llama3.2', 'friendly']) {
    const out = resolveRequest(Buffer.from(`{"model": "${asked}", "seed": 9007199254740993}`), declared, served);
    assert.ok(!(out instanceof GatewayError));
    assert.equal(out.model, 'llama3.2:latest');
    assert.equal(out.requestedModel, asked);
    assert.equal(out.group, 'gpu');
    assert.equal(out.policy, 'affinity');
    assert.equal(out.body.toString(), '{"model": "llama3.2:latest", "seed": 9007199254740993}');
  }
  const exact = resolveRequest(Buffer.from('{"model":"other"}'), declared, served);
  assert.ok(!(exact instanceof GatewayError));
  assert.equal(exact.body.toString(), '{"model":"other"}');
  assert.equal(exact.policy, undefined);
});
