// Issue 38 item 1: scope bypass through a second reading of `model`. The gateway routed, scoped and
// logged by the body's `"model"`, then sent the body on, and the node decoded it again its own way:
// Ollama's Go decoder matches `"Model"` / `"MODEL"` case-insensitively and the last one wins, so a
// tenant scoped to `llama3.2` sending `{"model":"llama3.2","Model":"secret-ollama"}` was answered
// by `secret-ollama`; a multipart body with two `boundary=` parameters was read with the first by
// the gateway (busboy) and with the last by Starlette (vLLM's audio routes), so `pub-model` was
// checked and `secret-model` served. Now a body a node could read with another model than the
// gateway did is refused 400 naming the key or the framing (in the route's own error dialect), and
// never reaches the node: a case variant beside `model` where a node matches keys case-insensitively,
// a repeated `model`, two boundaries, two Content-Disposition headers, a `model` part sent as
// octet-stream. Both hostile readers live here as test doubles: a Go-style decoder in front of the
// Ollama sim, and a Starlette-style multipart reader behind an audio route.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { untilListed } from '#test/fixtures/gateway-waits.ts';

const PUB_KEY = 'sk-scoped-to-llama';
const AUDIO_KEY = 'sk-scoped-to-pub-model';

async function listen(
  handler: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void | Promise<void>,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      Promise.resolve(handler(req, res, Buffer.concat(chunks))).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: String(error) }));
      });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function closeServer(server: Server | undefined): Promise<void> {
  if (server === undefined) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

// ---------- A Go-style decoder (encoding/json into a struct with `Model string \`json:"model"\``) ----------

/** The top-level members of a JSON object text, in order, duplicates kept (what a streaming decoder sees). */
function topLevelMembers(text: string): [string, unknown][] {
  const members: [string, unknown][] = [];
  let i = text.indexOf('{') + 1;
  const skipSpace = (): void => {
    while (/[ \t\r\n]/.test(text[i] ?? '')) i += 1;
  };
  const stringEnd = (from: number): number => {
    let j = from + 1;
    while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
    return j + 1;
  };
  /** Where the value starting at `from` ends: the `,` or `}` after it at the top level. */
  const valueEnd = (from: number): number => {
    let depth = 0;
    for (let j = from; j < text.length; j += 1) {
      const c = text[j];
      if (c === '"') j = stringEnd(j) - 1;
      else if (c === '{' || c === '[') depth += 1;
      else if ((c === '}' || c === ']') && depth > 0) depth -= 1;
      else if ((c === ',' || c === '}') && depth === 0) return j;
    }
    return text.length;
  };
  for (;;) {
    skipSpace();
    if (text[i] !== '"') return members;
    const keyEnd = stringEnd(i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = keyEnd;
    skipSpace();
    i += 1; // the colon
    const end = valueEnd(i);
    members.push([key, JSON.parse(text.slice(i, end))]);
    i = text[end] === ',' ? end + 1 : end;
  }
}

/** Go's case folding for the field match (unicode.SimpleFold: the Kelvin sign is a k, the long s an s). */
const goFold = (key: string): string =>
  [...key].map((c) => (c === '\u212a' ? 'k' : c === '\u017f' ? 's' : c.toLowerCase())).join('');

/** The model Go's encoding/json reads: every key that folds to "model" sets it, the last one wins. */
function goReadsModel(body: Buffer): string | undefined {
  let model: string | undefined;
  for (const [key, value] of topLevelMembers(body.toString('utf8')))
    if (goFold(key) === 'model' && typeof value === 'string') model = value;
  return model;
}

// ---------- A Starlette-style multipart reader (python-multipart under Starlette's FormData) ----------

/** The last `boundary=` parameter (Starlette's parse_options_header builds a dict: the last wins). */
function starletteBoundary(contentType: string): string | undefined {
  const all = [...contentType.matchAll(/;\s*boundary=(?:"([^"]*)"|([^;\s]*))/gi)];
  const last = all.at(-1);
  return last?.[1] ?? last?.[2];
}

/** The form's fields: each part's last Content-Disposition, a part without filename a field; `get` = the last. */
function starletteModel(body: Buffer, contentType: string): string | undefined {
  const boundary = starletteBoundary(contentType);
  if (boundary === undefined) return undefined;
  const text = body.toString('latin1');
  if (!text.startsWith(`--${boundary}`)) return undefined;
  let model: string | undefined;
  for (const part of text.slice(boundary.length + 2).split(`\r\n--${boundary}`)) {
    if (part.startsWith('--')) break;
    const split = part.indexOf('\r\n\r\n');
    const headers = part.slice(2, split).split('\r\n');
    const disposition = headers.filter((h) => /^content-disposition:/i.test(h)).at(-1) ?? '';
    const name = [...disposition.matchAll(/;\s*name="?([^";]*)"?/gi)].at(-1)?.[1];
    if (name === 'model' && !/filename=/i.test(disposition))
      model = Buffer.from(part.slice(split + 4), 'latin1').toString('utf8');
  }
  return model;
}

// ---------- The fleet: an Ollama sim behind the Go-style decoder; an audio node reading like Starlette ----------

const FLEET = `
[[node]]
name = "olla"
kind = "ollama"
ttft = "1ms"
tokens_per_second = 1000
models = ["llama3.2:latest", "secret-ollama:latest"]
`;

let sim: SimFleet | undefined;
let goDecoder: Server | undefined;
let audioNode: Server | undefined;
let gw: GatewayUnderTest | undefined;
/** What each hostile reader read, request by request. */
const goRead: (string | undefined)[] = [];
const starletteRead: (string | undefined)[] = [];

before(async () => {
  sim = await startSimFleet(FLEET);
  const target = sim.url('olla');
  // Decodes inference bodies as Ollama does, and sends the sim the model it read (every other
  // member as sent); everything else passes through.
  const go = await listen(async (req, res, body) => {
    let forward: Buffer | undefined = req.method === 'GET' || req.method === 'HEAD' ? undefined : body;
    if (forward !== undefined && String(req.headers['content-type']).includes('json')) {
      const model = goReadsModel(body);
      goRead.push(model);
      const members = Object.fromEntries(topLevelMembers(body.toString('utf8')).filter(([key]) => goFold(key) !== 'model'));
      forward = Buffer.from(JSON.stringify({ ...members, model }));
    }
    const answer = await request(`${target}${req.url ?? '/'}`, {
      method: req.method as 'GET',
      body: forward,
      headers: { 'content-type': String(req.headers['content-type'] ?? 'application/json') },
      signal: AbortSignal.timeout(30_000),
    });
    const bytes = Buffer.from(await answer.body.arrayBuffer());
    res.writeHead(answer.statusCode, { 'content-type': String(answer.headers['content-type'] ?? 'application/json') }).end(bytes);
  });
  goDecoder = go.server;
  const audio = await listen((req, res, body) => {
    if (req.method === 'GET' && req.url === '/health')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    if (req.method === 'GET' && req.url === '/v1/models') {
      const data = ['pub-model', 'secret-model'].map((id) => ({ id, object: 'model', owned_by: 'vllm', max_model_len: 4096 }));
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data }));
    }
    if (req.method !== 'POST')
      return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
    const model = starletteModel(body, String(req.headers['content-type'] ?? ''));
    starletteRead.push(model);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ text: `transcribed by ${model}` }));
  });
  audioNode = audio.server;
  gw = await startGateway(
    [
      '[server]\nlisten = "127.0.0.1:0"\ndrain_timeout = "0s"',
      '[health]\ninterval = "200ms"\ntimeout = "5s"',
      '[discovery]\ninterval = "300ms"\ntimeout = "5s"',
      `[[tenants]]\nname = "pub"\nkeys = ["${PUB_KEY}"]\nmodels = ["llama3.2*"]`,
      `[[tenants]]\nname = "listener"\nkeys = ["${AUDIO_KEY}"]\nmodels = ["pub-model"]`,
      `[[nodes]]\nname = "olla"\nurl = "${go.url}"\nkind = "ollama"`,
      `[[nodes]]\nname = "whisper"\nurl = "${audio.url}"\nkind = "vllm"`,
    ].join('\n'),
  );
  await untilListed(gw!, 2, 'both nodes listed');
});

after(async () => {
  await gw?.close();
  await closeServer(goDecoder);
  await closeServer(audioNode);
  await sim?.close();
});

const post = async (
  path: string,
  key: string,
  body: string | Buffer,
  contentType = 'application/json',
): Promise<{ status: number; json: Record<string, unknown> }> => {
  const res = await request(`${gw!.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
    body,
    signal: AbortSignal.timeout(60_000),
  });
  return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
};

const openaiError = (json: Record<string, unknown>): { message: string; param: unknown; type: unknown } =>
  json.error as { message: string; param: unknown; type: unknown };

test('the Go-style decoder in front of the Ollama sim reads what the gateway read: a plain request is served as its model', async () => {
  const before_ = goRead.length;
  const ok = await post(
    '/v1/chat/completions',
    PUB_KEY,
    '{"model":"llama3.2","messages":[{"role":"user","content":"hi"}],"max_tokens":3}',
  );
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
  assert.equal(ok.json.model, 'llama3.2:latest');
  assert.deepEqual(goRead.slice(before_), ['llama3.2:latest'], 'the gateway sent the id the node listed');
  // Out of scope, named plainly: the scope holds (the unknown model's 404), the node never asked.
  const hidden = await post(
    '/v1/chat/completions',
    PUB_KEY,
    '{"model":"secret-ollama","messages":[{"role":"user","content":"hi"}]}',
  );
  assert.equal(hidden.status, 404);
  assert.equal(goRead.length, before_ + 1);
});

test('a case variant of "model" beside it is refused 400 naming the key, and the Ollama node never sees it', async () => {
  const before_ = goRead.length;
  const variants = ['Model', 'MODEL', 'mOdEl', '\\u004dodel'];
  for (const variant of variants) {
    const attack = await post(
      '/v1/chat/completions',
      PUB_KEY,
      `{"model":"llama3.2","${variant}":"secret-ollama","messages":[{"role":"user","content":"hi"}],"max_tokens":3}`,
    );
    assert.equal(attack.status, 400, `${variant}: ${JSON.stringify(attack.json)} (the node read ${String(goRead.at(-1))})`);
    const error = openaiError(attack.json);
    assert.equal(error.param, 'model');
    assert.equal(error.type, 'invalid_request_error');
    assert.match(error.message, /^body has "(Model|MODEL|mOdEl)" beside "model": a node may read either/);
  }
  // Without any "model": the gateway would add the default (or refuse), Go would still read the variant last.
  const alone = await post(
    '/v1/chat/completions',
    PUB_KEY,
    '{"Model":"secret-ollama","messages":[{"role":"user","content":"hi"}]}',
  );
  assert.equal(alone.status, 400);
  // The same for any member the gateway reads: it would reserve 3 tokens, Go would read 100000.
  const budget = await post(
    '/v1/chat/completions',
    PUB_KEY,
    '{"model":"llama3.2","max_tokens":3,"MAX_TOKENS":100000,"messages":[{"role":"user","content":"hi"}]}',
  );
  assert.equal(budget.status, 400, JSON.stringify(budget.json));
  assert.match(openaiError(budget.json).message, /^body has "MAX_TOKENS" beside "max_tokens"/);
  // Ollama's native API, in Ollama's own error shape.
  const native = await post(
    '/api/chat',
    PUB_KEY,
    '{"model":"llama3.2","MODEL":"secret-ollama","messages":[{"role":"user","content":"hi"}],"stream":false}',
  );
  assert.equal(native.status, 400, JSON.stringify(native.json));
  assert.match(String(native.json.error), /body has "MODEL" beside "model"/);
  assert.deepEqual(goRead.slice(before_), [], 'no hostile body reached the node');
  assert.ok(!goRead.includes('secret-ollama'), 'the node never read the secret model');
});

test('a repeated "model" is refused for every kind, however it is written', async () => {
  const before_ = goRead.length;
  for (const body of [
    '{"model":"secret-ollama","model":"llama3.2","messages":[]}',
    '{"mod\\u0065l":"secret-ollama","model":"llama3.2","messages":[]}',
  ]) {
    const refused = await post('/v1/chat/completions', PUB_KEY, body);
    assert.equal(refused.status, 400, body);
    assert.match(openaiError(refused.json).message, /^body has "model" twice/);
  }
  assert.equal(goRead.length, before_);
});

const B = 'pub-boundary-1';
const S = 'secret-boundary-2';
const WAV = Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'), Buffer.alloc(28, 1)]);
const field = (boundary: string, name: string, value: string, extra = ''): string =>
  `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${extra}\r\n\r\n${value}\r\n`;
const file = (boundary: string): Buffer =>
  Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
    ),
    WAV,
    Buffer.from('\r\n'),
  ]);

test('the Starlette-style reader behind the audio route reads what the gateway read: a plain form is served as its model', async () => {
  const before_ = starletteRead.length;
  const body = Buffer.concat([Buffer.from(field(B, 'model', 'pub-model')), file(B), Buffer.from(`--${B}--\r\n`)]);
  const ok = await post('/v1/audio/transcriptions', AUDIO_KEY, body, `multipart/form-data; boundary=${B}`);
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
  assert.equal(ok.json.text, 'transcribed by pub-model');
  assert.deepEqual(starletteRead.slice(before_), ['pub-model']);
});

test('multipart framing a parser could read two ways is refused 400 naming it, and the audio node never sees it', async () => {
  const before_ = starletteRead.length;
  // Read with the first boundary (busboy): pub-model after a preamble. With the last (Starlette): secret-model.
  const pubForm = Buffer.concat([Buffer.from(`\r\n${field(B, 'model', 'pub-model')}`), file(B), Buffer.from(`--${B}--\r\n`)]);
  const twoBoundaries = Buffer.concat([
    Buffer.from(field(S, 'model', 'secret-model')),
    Buffer.from(`--${S}\r\nContent-Disposition: form-data; name="file"; filename="b.wav"\r\n\r\n`),
    pubForm,
    Buffer.from(`\r\n--${S}--\r\n`),
  ]);
  const cases: [string, Buffer, string, RegExp][] = [
    [
      'two boundary parameters',
      twoBoundaries,
      `multipart/form-data; boundary=${B}; boundary=${S}`,
      /Content-Type has "boundary" twice: parsers differ in which one they read/,
    ],
    [
      'two boundary parameters, the second capitalised',
      twoBoundaries,
      `multipart/form-data; boundary=${B}; Boundary=${S}`,
      /"boundary" twice/,
    ],
    // Busboy reads a part's first Content-Disposition (language), Starlette its last (a second model).
    [
      'two Content-Disposition headers',
      Buffer.concat([
        Buffer.from(field(B, 'model', 'pub-model')),
        Buffer.from(field(B, 'language', 'secret-model', '\r\nContent-Disposition: form-data; name="model"')),
        file(B),
        Buffer.from(`--${B}--\r\n`),
      ]),
      `multipart/form-data; boundary=${B}`,
      /2 Content-Disposition headers/,
    ],
    // Busboy makes an octet-stream part a file (no `model` field); Starlette a field (no filename).
    [
      'a model part sent as octet-stream',
      Buffer.concat([
        Buffer.from(field(B, 'model', 'pub-model')),
        Buffer.from(field(B, 'model', 'secret-model', '\r\nContent-Type: application/octet-stream')),
        file(B),
        Buffer.from(`--${B}--\r\n`),
      ]),
      `multipart/form-data; boundary=${B}`,
      /model/,
    ],
  ];
  for (const [name, body, contentType, message] of cases) {
    const refused = await post('/v1/audio/transcriptions', AUDIO_KEY, body, contentType);
    assert.equal(refused.status, 400, `${name}: ${JSON.stringify(refused.json)} (the node read ${String(starletteRead.at(-1))})`);
    assert.match(openaiError(refused.json).message, message, name);
  }
  assert.deepEqual(starletteRead.slice(before_), [], 'no ambiguous form reached the node');
});
