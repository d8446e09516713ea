// Issue 10, item 12: deeply nested JSON in a prompt, input, tools or any field of a body the
// gateway rewrote (alias, default model) overflowed the stack in a recursive walk: a 500, not
// counted. Now the nesting depth is measured on the bytes first, and a body past the limit gets a
// 400 that says so, counted like every other answer.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcessGateway, type InProcessGateway } from '#test/fixtures/in-process.ts';
import { startRecordingUpstream, type RecordingUpstream } from '#test/fixtures/recording-upstream.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { metricSamples } from '#test/fixtures/context.ts';
import { MAX_JSON_DEPTH } from '#src/proxy/request/raw-json.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { listings } from '#test/fixtures/gateway-waits.ts';

let upstream: RecordingUpstream;
let gw: InProcessGateway;

before(async () => {
  upstream = await startRecordingUpstream(['m']);
  gw = await startInProcessGateway(`
[server]
listen = "127.0.0.1:0"
[models]
default = "m"
[[models.available]]
name = "m"
aliases = ["alias-m"]
[[nodes]]
name = "a"
url = "${upstream.url}"
kind = "vllm"
`);
  await untilEvent(
    async () => (await httpJson('GET', `${gw.url}/v1/models`)).text.includes('"m"'),
    [listings(gw)],
    'the model listed',
  );
});

after(async () => {
  await gw?.close();
  await upstream?.close();
});

const nested = (depth: number): unknown => JSON.parse('['.repeat(depth) + ']'.repeat(depth));
const DEEP = 100_000;

const cases: [string, string, string][] = [
  ['a completions prompt', '/v1/completions', `{"model":"m","prompt":${'['.repeat(DEEP)}${']'.repeat(DEEP)}}`],
  ['an embeddings input', '/v1/embeddings', `{"model":"m","input":${'['.repeat(DEEP)}${']'.repeat(DEEP)}}`],
  ['chat tools', '/v1/chat/completions', `{"model":"m","messages":[],"tools":${'['.repeat(DEEP)}${']'.repeat(DEEP)}}`],
  [
    'a field of an aliased body',
    '/v1/chat/completions',
    `{"model":"alias-m","messages":[],"x":${'['.repeat(DEEP)}${']'.repeat(DEEP)}}`,
  ],
  [
    'a field of a body given the default model',
    '/v1/chat/completions',
    `{"messages":[],"x":${'['.repeat(DEEP)}${']'.repeat(DEEP)}}`,
  ],
];

for (const [what, path, body] of cases) {
  test(`deep nesting in ${what}: 400 naming the limit, counted, nothing sent upstream`, async () => {
    const before = upstream.bodies.length;
    const res = await httpJson('POST', `${gw.url}${path}`, body);
    assert.equal(res.status, 400, res.text);
    assert.match(res.json<{ error: { message: string } }>().error.message, new RegExp(`deeper than ${MAX_JSON_DEPTH} levels`));
    assert.equal(upstream.bodies.length, before);
  });
}

test('the 400s are counted in gateway_requests_total', async () => {
  const metrics = (await httpJson('GET', `${gw.url}/metrics`)).text;
  const counted = metricSamples(metrics, 'gateway_requests_total').filter((s) => s.labels.includes('status="400"'));
  assert.equal(
    counted.reduce((sum, s) => sum + s.value, 0),
    cases.length,
  );
});

test('nesting at the limit is still served', async () => {
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, {
    model: 'alias-m',
    messages: [],
    x: nested(MAX_JSON_DEPTH - 1),
  });
  assert.equal(res.status, 200, res.text);
});
