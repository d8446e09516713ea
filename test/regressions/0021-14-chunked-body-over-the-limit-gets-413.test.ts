// Issue 21, item 14 (b): the only tests of `max_request_body_bytes` declared their length, so a
// bound applied only to `Content-Length` survived them. A chunked body (no declared length) over
// the limit must get 413 too, and nothing of it may reach a node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startInProcessGateway } from '#test/fixtures/in-process.ts';
import { startRecordingUpstream } from '#test/fixtures/recording-upstream.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { listings } from '#test/fixtures/gateway-waits.ts';

const LIMIT = 4_096;

/** POSTs `parts` with Transfer-Encoding: chunked (no Content-Length); resolves with the status and body. */
function postChunked(url: string, parts: readonly string[]): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/v1/chat/completions`,
      { method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    // The gateway may close the connection once it has answered; what matters is the answer.
    req.on('error', reject);
    req.setTimeout(60_000, () => req.destroy(new Error('no answer within 60 s')));
    for (const part of parts) req.write(part);
    req.end();
  });
}

test('a chunked request body over max_request_body_bytes gets 413, and the node never sees it', async () => {
  const upstream = await startRecordingUpstream(['m']);
  const gw = await startInProcessGateway(
    gatewayToml([{ name: 'n', url: upstream.url, kind: 'vllm' }], '', `max_request_body_bytes = ${LIMIT}`),
  );
  try {
    await untilEvent(
      async () => (await httpJson('GET', `${gw.url}/health`)).json<{ models_ok: number }>().models_ok === 1,
      [listings(gw)],
      'the node listed',
    );
    const head = '{"model":"m","messages":[{"role":"user","content":"';
    const pad = 'x'.repeat(1_024);
    // Five chunks of 1 KiB past the head: over 4 KiB in total, each chunk under it.
    const over = await postChunked(gw.url, [head, pad, pad, pad, pad, pad, '"}]}']);
    assert.equal(over.status, 413, over.text);
    const error = (JSON.parse(over.text) as { error: { type: string; message: string } }).error;
    assert.equal(error.type, 'invalid_request_error');
    assert.match(error.message, /4096/);
    assert.equal(upstream.bodies.length, 0, 'nothing reached the node');
    // A chunked body under the limit still goes through.
    const under = await postChunked(gw.url, [head, 'hello', '"}]}']);
    assert.equal(under.status, 200, under.text);
    assert.equal(upstream.bodies.length, 1);
  } finally {
    await gw.close();
    await upstream.close();
  }
});
