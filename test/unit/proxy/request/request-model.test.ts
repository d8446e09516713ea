import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '#src/core/errors.ts';
import type { NodeKind } from '#src/config/index.ts';
import { buildCatalog, resolveRequest, type ResolvedRequest } from '#src/proxy/index.ts';
import { fleetJsonKeys } from '#src/proxy/request/model-readings.ts';

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
  const declared = buildCatalog({
    default: undefined,
    available: [{ name: 'llama3.2', group: 'gpu', aliases: ['friendly'], policy: 'affinity' }],
  });
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

test('one reading of the model: a repeated "model" is refused for every kind, a case variant (of it or of any member) where a node matches keys case-insensitively', () => {
  const exactNodes = (): 'exact' => 'exact';
  const looseNodes = (): 'case-insensitive' => 'case-insensitive';
  const table: { body: string; exact: RegExp | undefined; loose: RegExp | undefined; param?: string }[] = [
    { body: '{"model":"big","messages":[]}', exact: undefined, loose: undefined },
    { body: '{"model":"big","model":"llama"}', exact: /body has "model" twice/, loose: /body has "model" twice/ },
    { body: '{"model":"big","mod\\u0065l":"llama"}', exact: /body has "model" twice/, loose: /twice/ },
    { body: '{"model":"a","model":"b","model":"c"}', exact: /"model" 3 times/, loose: /"model" 3 times/ },
    {
      body: '{"model":"big","Model":"llama"}',
      exact: undefined,
      loose: /body has "Model" beside "model": a node may read either/,
    },
    { body: '{"MODEL":"llama","model":"big"}', exact: undefined, loose: /body has "MODEL" beside "model"/ },
    { body: '{"model":"big","mOdEl":"llama"}', exact: undefined, loose: /"mOdEl"/ },
    { body: '{"model":"big","\\u004dodel":"llama"}', exact: undefined, loose: /body has "Model" beside/ },
    // No "model" at all: the default is added, and Go would still read "Model" after it.
    { body: '{"Model":"llama","messages":[]}', exact: undefined, loose: /body has "Model" beside "model"/ },
    // Only top-level keys are read as the model; nested ones and other keys are left alone.
    { body: '{"model":"big","messages":[{"model":"x","Model":"y"}],"models":1,"Modal":2}', exact: undefined, loose: undefined },
    // Any two top-level keys one to a case-insensitive decoder: the gateway reserves and streams by the one it reads.
    {
      body: '{"model":"big","max_tokens":3,"Max_Tokens":100000}',
      exact: undefined,
      loose: /body has "Max_Tokens" beside "max_tokens": a node may read either/,
      param: 'max_tokens',
    },
    {
      body: '{"STREAM":true,"model":"big","stream":false}',
      exact: undefined,
      loose: /body has "stream" beside "STREAM"/,
      param: 'STREAM',
    },
    { body: '{"model":"big","Temperature":0.5,"Top_P":2}', exact: undefined, loose: undefined },
    // A lone case variant of a key the gateway reads, at any depth (read-keys.ts): such a node reads it as the key.
    {
      body: '{"model":"big","Temperature":0.5,"N":2}',
      exact: undefined,
      loose: /body has "N": a node whose JSON keys match case-insensitively reads it as "n"/,
      param: 'n',
    },
    { body: '{"model":"big","MAX_TOKENS":100000}', exact: undefined, loose: /reads it as "max_tokens"/, param: 'max_tokens' },
    {
      body: '{"model":"m","options":{"NUM_PREDICT":100000}}',
      exact: undefined,
      loose: /body has "options.NUM_PREDICT": .* reads it as "options.num_predict"/,
      param: 'options.num_predict',
    },
    {
      body: '{"model":"m","options":{"num_predict":5,"Num_Predict":100000}}',
      exact: undefined,
      loose: /body has "options.Num_Predict" beside "options.num_predict"/,
      param: 'options.num_predict',
    },
    {
      body: '{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"user","CONTENT":"long"}]}',
      exact: undefined,
      loose: /body has "messages\[1\].CONTENT": .* "messages\[1\].content"/,
      param: 'messages[1].content',
    },
    {
      body: '{"model":"m","messages":[{"role":"user","content":[{"type":"text","Text":"long"}]}]}',
      exact: undefined,
      loose: /"messages\[0\].content\[0\].Text"/,
      param: 'messages[0].content[0].text',
    },
    {
      body: '{"model":"m","stream":true,"stream_options":{"Include_Usage":false}}',
      exact: undefined,
      loose: /"stream_options.Include_Usage"/,
      param: 'stream_options.include_usage',
    },
    { body: '{"model":"m","options":{"num_pr\\u0065dict":5}}', exact: undefined, loose: undefined },
    // Keys the gateway does not read are not judged, at any depth: a tool's schema, a message's own extras.
    {
      body: '{"model":"m","tools":[{"type":"function","function":{"name":"f","parameters":{"properties":{"Name":{},"name":{}}}}}],"messages":[{"role":"user","content":"x","Extra":1}],"format":{"Type":"object"}}',
      exact: undefined,
      loose: undefined,
    },
  ];
  for (const row of table) {
    for (const [matching, expected] of [
      [exactNodes, row.exact],
      [looseNodes, row.loose],
    ] as const) {
      const out = resolveRequest(Buffer.from(row.body), catalog, (name) => name, matching);
      if (expected === undefined) {
        assert.ok(!(out instanceof GatewayError), `${row.body} (${matching()}): ${String(out)}`);
        continue;
      }
      assert.ok(out instanceof GatewayError, `${row.body} (${matching()}) refused`);
      assert.equal(out.status, 400);
      assert.equal(out.param, row.param ?? 'model');
      assert.match(out.message, expected, row.body);
    }
  }
  // Unknown matching (no fleet said) is the loosest.
  assert.ok(resolve('{"model":"big","Model":"x"}') instanceof GatewayError);
});

test('the fleet matches keys as loosely as its loosest node: an Ollama or an unknown kind makes it case-insensitive', () => {
  const view = (kind: NodeKind, detected?: 'vllm' | 'ollama'): Parameters<typeof fleetJsonKeys>[0][number] =>
    ({ spec: { kind }, capacity: { server: detected === undefined ? undefined : { detected } } }) as unknown as Parameters<
      typeof fleetJsonKeys
    >[0][number];
  assert.equal(fleetJsonKeys([]), 'exact');
  assert.equal(fleetJsonKeys([view('vllm'), view('sglang'), view('llamacpp')]), 'exact');
  assert.equal(fleetJsonKeys([view('vllm'), view('ollama')]), 'case-insensitive');
  assert.equal(fleetJsonKeys([view('openai')]), 'case-insensitive');
  assert.equal(fleetJsonKeys([view('auto')]), 'case-insensitive', 'not told apart yet: may be an Ollama');
  assert.equal(fleetJsonKeys([view('auto', 'vllm')]), 'exact');
  assert.equal(fleetJsonKeys([view('auto', 'ollama')]), 'case-insensitive');
});
