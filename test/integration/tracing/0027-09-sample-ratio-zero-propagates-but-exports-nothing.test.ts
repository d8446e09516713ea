// Issue 27, sampling: `sample_ratio = 0` records no span, yet the trace context still goes on —
// a node is sent a traceparent continuing the client's trace (a new span id, the sampled flag
// cleared: the client's flag does not force a trace the ratio declines), or a new trace's when the
// client sent none — so whatever traces further on still joins one trace. Stopping the gateway
// flushes its spans: the receiver has none of it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { httpJson } from '#test/fixtures/http.ts';
import { CHAT, chatAnswer, startScriptedNode, startTestGateway, type ScriptedNode } from '#test/fixtures/scripted-node.ts';
import { startOtlpReceiver, type OtlpReceiver } from '#test/fixtures/otlp-receiver.ts';

const CLIENT_TRACE = '5bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '10f067aa0ba902b7';

let receiver: OtlpReceiver;
let node: ScriptedNode;

before(async () => {
  receiver = await startOtlpReceiver();
  node = await startScriptedNode(
    (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(chatAnswer()),
  );
});

after(async () => {
  await node?.close();
  await receiver?.close();
});

test('sample_ratio 0: nothing exported, the context still propagated to the node', async () => {
  const gw = await startTestGateway(
    [{ name: 'n', url: node.url }],
    `[tracing]\notlp_endpoint = "${receiver.url}"\nservice_name = "sy-zero"\nsample_ratio = 0`,
  );
  try {
    const traced = await httpJson('POST', `${gw.url}/v1/chat/completions`, CHAT, {
      traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`,
      tracestate: 'vendor=abc',
    });
    assert.equal(traced.status, 200);
    const sent = String(node.seen.lastHeaders?.traceparent);
    const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(sent);
    assert.ok(match, `a traceparent was sent: ${sent}`);
    assert.equal(match[1], CLIENT_TRACE, "the client's trace goes on");
    assert.notEqual(match[2], CLIENT_SPAN, "as a child of the gateway's (unrecorded) attempt span");
    assert.equal(match[3], '00', 'not sampled');
    assert.equal(node.seen.lastHeaders?.tracestate, 'vendor=abc', "the client's tracestate goes on");

    const fresh = await httpJson('POST', `${gw.url}/v1/chat/completions`, CHAT);
    assert.equal(fresh.status, 200);
    assert.match(
      String(node.seen.lastHeaders?.traceparent),
      /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-00$/,
      'a new trace, not sampled',
    );
  } finally {
    await gw.close();
  }
  assert.deepEqual(
    receiver.spans.filter((s) => s.service === 'sy-zero'),
    [],
    'nothing exported at ratio 0',
  );
});

test('sample_ratio 1 for comparison: the same requests are exported on stop', async () => {
  const gw = await startTestGateway(
    [{ name: 'n', url: node.url }],
    `[tracing]\notlp_endpoint = "${receiver.url}"\nservice_name = "sy-one"`,
  );
  try {
    assert.equal(
      (await httpJson('POST', `${gw.url}/v1/chat/completions`, CHAT, { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` }))
        .status,
      200,
    );
  } finally {
    await gw.close();
  }
  const spans = receiver.spans.filter((s) => s.service === 'sy-one');
  assert.equal(
    spans.filter((s) => s.traceId === CLIENT_TRACE && s.kind === 2).length,
    1,
    'its request span, flushed when the gateway stopped',
  );
});
