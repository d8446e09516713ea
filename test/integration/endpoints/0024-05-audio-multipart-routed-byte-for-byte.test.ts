// Issue 24, audio: `/v1/audio/transcriptions`, `/v1/audio/translations` (multipart/form-data) and
// `/v1/audio/speech` (JSON) were not routes of the gateway. Now the multipart `model` field is read
// with the streaming parser, bounded by [server] max_request_body_bytes (413 past it), a form
// without `model` is refused 400 naming the field, the request is routed by model to a node whose
// kind serves the endpoint (vLLM; Ollama excluded with its reason), failed over before the first
// byte, and the body goes to the node byte for byte (its content-type and boundary kept; an alias
// rewrites only the model part). Answers that are not JSON (a text transcript, speech audio, a
// stream) reach the client as the node sent them. The official `openai` client passes unchanged.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import { request } from 'undici';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { startInProcessGateway } from '#test/fixtures/in-process.ts';
import { startScriptedNode, type InferenceScript } from '#test/fixtures/scripted-node.ts';
import { setSimFaults, simRequests } from '#test/fixtures/http.ts';
import { untilListed } from '#test/fixtures/gateway-waits.ts';

/** A mono 16-bit 16 kHz WAV of a 440 Hz sine: a tiny RIFF header and `ms` of samples. */
function sineWav(ms: number): Buffer {
  const rate = 16_000;
  const samples = Math.round((rate * ms) / 1000);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i += 1) data.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

const WAV = sineWav(300);

const FLEET = `
[[node]]
name = "w1"
kind = "vllm"
ttft = "1ms"
models = ["whisper:latest"]

[[node]]
name = "w2"
kind = "vllm"
ttft = "1ms"
models = ["whisper:latest"]

[[node]]
name = "ol"
kind = "ollama"
ttft = "1ms"
models = ["whisper:latest"]
`;

let env: FleetAndGateway;
let client: OpenAI;

before(async () => {
  env = await startFleetAndGateway(FLEET, (sim) =>
    [
      '[server]\nlisten = "127.0.0.1:0"\ndrain_timeout = "0s"',
      '[health]\ninterval = "200ms"\ntimeout = "5s"',
      '[discovery]\ninterval = "30s"\ntimeout = "5s"',
      '[routing]\npolicy = "round-robin"',
      ...sim.nodes.map((n) => `[[nodes]]\nname = "${n.name}"\nurl = "${n.url}"\nkind = "${n.kind}"`),
    ].join('\n'),
  );
  await untilListed(env.gw, 3, 'every node listed');
  client = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
});

after(async () => {
  await env?.close();
});

/** The global fetch and FormData (what browsers and the openai client use). */
const postForm = (path: string, form: FormData): Promise<Response> =>
  fetch(`${env.gw.url}${path}`, { method: 'POST', body: form, signal: AbortSignal.timeout(20_000) });

function wavForm(fields: Record<string, string>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([WAV], { type: 'audio/wav' }), 'tone.wav');
  return form;
}

test('the official openai client transcribes a WAV through the gateway, on a vLLM node; Ollama is excluded with its reason', async () => {
  const nodes = new Set<string>();
  for (let i = 0; i < 4; i += 1) {
    const { data, response } = await client.audio.transcriptions
      .create({ file: await toFile(WAV, 'tone.wav', { type: 'audio/wav' }), model: 'whisper:latest' })
      .withResponse();
    assert.equal(typeof data.text, 'string');
    assert.ok(data.text.length > 0);
    nodes.add(String(response.headers.get('x-switchyard-node')));
  }
  assert.deepEqual([...nodes].sort(), ['w1', 'w2']);
  const ol = (await env.gw.explain('model=whisper:latest&endpoint=/v1/audio/transcriptions')).nodes.find((n) => n.node === 'ol');
  assert.equal(ol?.reason, 'endpoint_unsupported');
  assert.match(String(ol?.detail), /its kind \(ollama\) does not serve POST \/v1\/audio\/transcriptions/);
  assert.equal((await simRequests(env.sim.url('ol'))).filter((r) => r.path.startsWith('/v1/audio/')).length, 0);
});

test('a text transcript, verbose_json and a stream pass through as the node sends them', async () => {
  const text = await postForm('/v1/audio/translations', wavForm({ model: 'whisper:latest', response_format: 'text' }));
  assert.equal(text.status, 200);
  assert.match(String(text.headers.get('content-type')), /^text\/plain/);
  assert.match(await text.text(), /^the quick/);
  const verbose = await postForm(
    '/v1/audio/transcriptions',
    wavForm({ model: 'whisper:latest', response_format: 'verbose_json', language: 'de' }),
  );
  const json = (await verbose.json()) as { task: string; language: string; segments: unknown[] };
  assert.equal(json.task, 'transcribe');
  assert.equal(json.language, 'de');
  const stream = await postForm('/v1/audio/transcriptions', wavForm({ model: 'whisper:latest', stream: 'true' }));
  assert.equal(stream.status, 200);
  assert.match(String(stream.headers.get('content-type')), /^text\/event-stream/);
  const events = await stream.text();
  assert.match(events, /"object":"transcription\.chunk"/);
  assert.ok(events.endsWith('data: [DONE]\n\n'));
});

test('failover before the first byte: a node answering 500 is passed over', async () => {
  await setSimFaults(env.sim.url('w1'), { inference: 'error500' });
  try {
    for (let i = 0; i < 3; i += 1) {
      const { response } = await client.audio.transcriptions
        .create({ file: await toFile(WAV, 'tone.wav'), model: 'whisper:latest' })
        .withResponse();
      assert.equal(response.headers.get('x-switchyard-node'), 'w2');
    }
    assert.match(await env.gw.metrics(), /gateway_upstream_attempts_total\{node="w1",result="http_5xx"\} [1-9]/);
  } finally {
    await setSimFaults(env.sim.url('w1'), { inference: 'none' });
  }
});

test('a form without model is refused 400 naming the field; counted by endpoint', async () => {
  const form = new FormData();
  form.append('file', new Blob([WAV], { type: 'audio/wav' }), 'tone.wav');
  const res = await postForm('/v1/audio/transcriptions', form);
  assert.equal(res.status, 400);
  const body = (await res.json()) as { error: { message: string; param: string | null } };
  assert.equal(body.error.param, 'model');
  assert.match(body.error.message, /`model` form field/);
  const metrics = await env.gw.metrics();
  assert.match(metrics, /gateway_endpoint_requests_total\{endpoint="\/v1\/audio\/transcriptions",status="200"\} [1-9]/);
  assert.match(metrics, /gateway_endpoint_requests_total\{endpoint="\/v1\/audio\/transcriptions",status="400"\} 1/);
  assert.match(metrics, /gateway_endpoint_requests_total\{endpoint="\/v1\/audio\/translations",status="200"\} 1/);
});

test('byte for byte: the multipart body and its boundary reach the node unchanged (an alias rewrites only the model part); a too-large body is 413; speech audio passes through', async () => {
  const speech = Buffer.from([
    0xff, 0xf3, 0x44, 0xc4, 0x00, 0x00, 0x00, 0x03, 0x48, 0x00, 0x00, 0x00, 0x00, 0x4c, 0x41, 0x4d, 0x45,
  ]);
  const seen: { body?: Buffer; contentType?: string; path?: string }[] = [];
  const script: InferenceScript = (req, res, body) => {
    seen.push({ body, contentType: req.headers['content-type'], path: req.url });
    if (req.url === '/v1/audio/speech') res.writeHead(200, { 'content-type': 'audio/mpeg' }).end(speech);
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"text" : "hello"  }');
  };
  const node = await startScriptedNode(script);
  const toml = [
    '[server]\nlisten = "127.0.0.1:0"\ndrain_timeout = "0s"\nmax_request_body_bytes = "64KiB"',
    '[health]\ninterval = "1s"',
    '[models]\n[[models.available]]\nname = "m"\naliases = ["stt"]',
    `[[nodes]]\nname = "proxy"\nurl = "${node.url}"\nkind = "openai"\nendpoints = ["/v1/audio/transcriptions", "/v1/audio/speech"]`,
  ].join('\n');
  let gw: Awaited<ReturnType<typeof startInProcessGateway>> | undefined;
  try {
    gw = await startInProcessGateway(toml);
    assert.ok(await gw.gateway.firstRoundDone(15_000));
    const boundary = '----switchyard-test-7b1f';
    const part = (name: string, value: string): string =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const body = (model: string, audio: Buffer): Buffer =>
      Buffer.concat([
        Buffer.from(
          `${part('language', 'en')}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="tone.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
        ),
        audio,
        Buffer.from(`\r\n${part('model', model)}--${boundary}--\r\n`),
      ]);
    const contentType = `multipart/form-data; boundary=${boundary}`;
    const send = (raw: Buffer): ReturnType<typeof request> =>
      request(`${gw?.url}/v1/audio/transcriptions`, {
        method: 'POST',
        headers: { 'content-type': contentType },
        body: raw,
        signal: AbortSignal.timeout(20_000),
      });

    const exact = await send(body('m', WAV));
    assert.equal(exact.statusCode, 200);
    assert.equal(await exact.body.text(), '{"text" : "hello"  }');
    assert.equal(seen[0]?.path, '/v1/audio/transcriptions');
    assert.equal(seen[0]?.contentType, contentType);
    assert.ok(seen[0]?.body?.equals(body('m', WAV)), 'the very bytes the client sent');

    const aliased = await send(body('stt', WAV));
    assert.equal(aliased.statusCode, 200);
    await aliased.body.text();
    assert.ok(seen[1]?.body?.equals(body('m', WAV)), 'only the model part rewritten');

    const big = await send(body('m', Buffer.alloc(70 * 1024, 1)));
    assert.equal(big.statusCode, 413);
    const refusal = (await big.body.json()) as { error: { message: string } };
    assert.match(refusal.error.message, /65536 bytes/);
    assert.equal(seen.length, 2, 'the node never asked');

    const spoken = await request(`${gw.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"stt","input":"hi","voice":"alloy"}',
      signal: AbortSignal.timeout(20_000),
    });
    assert.equal(spoken.statusCode, 200);
    assert.equal(spoken.headers['content-type'], 'audio/mpeg');
    assert.ok(Buffer.from(await spoken.body.arrayBuffer()).equals(speech));
    assert.equal(seen[2]?.body?.toString('utf8'), '{"model":"m","input":"hi","voice":"alloy"}');
  } finally {
    await gw?.close();
    await node.close();
  }
});
