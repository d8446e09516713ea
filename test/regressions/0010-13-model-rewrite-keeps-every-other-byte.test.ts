// Issue 10, item 13: alias and default-model rewrites re-serialised the whole body, so
// `"seed": 9007199254740993` reached the node as ...992 and `1e400` as null. Now only the model's
// value is replaced in the raw bytes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcessGateway, type InProcessGateway } from '#test/fixtures/in-process.ts';
import { startRecordingUpstream, type RecordingUpstream } from '#test/fixtures/recording-upstream.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { listings } from '#test/fixtures/gateway-waits.ts';

let upstream: RecordingUpstream;
let gw: InProcessGateway;

before(async () => {
  upstream = await startRecordingUpstream(['served-id']);
  gw = await startInProcessGateway(`
[server]
listen = "127.0.0.1:0"
[models]
default = "served-id"
[[models.available]]
name = "served-id"
aliases = ["friendly"]
[[nodes]]
name = "a"
url = "${upstream.url}"
kind = "vllm"
`);
  await untilEvent(
    async () => (await httpJson('GET', `${gw.url}/v1/models`)).text.includes('served-id'),
    [listings(gw)],
    'the model listed',
  );
});

after(async () => {
  await gw?.close();
  await upstream?.close();
});

const REST = '"messages":[{"role":"user","content":"hi"}], "seed": 9007199254740993, "temperature": 1e400, "n":1.50';

test('an alias is replaced by the served id and nothing else changes', async () => {
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, `{"model": "friendly", ${REST}}`);
  assert.equal(res.status, 200, res.text);
  assert.equal(upstream.bodies.at(-1)?.toString('utf8'), `{"model": "served-id", ${REST}}`);
});

test('the default model is added and nothing else changes', async () => {
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, `{${REST}}`);
  assert.equal(res.status, 200, res.text);
  assert.equal(upstream.bodies.at(-1)?.toString('utf8'), `{"model":"served-id",${REST}}`);
});

test('a body that names the served id passes byte for byte', async () => {
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, `{"model":"served-id", ${REST}}`);
  assert.equal(res.status, 200, res.text);
  assert.equal(upstream.bodies.at(-1)?.toString('utf8'), `{"model":"served-id", ${REST}}`);
});
