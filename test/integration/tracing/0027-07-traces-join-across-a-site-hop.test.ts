// Issue 27, tracing across sites: a request forwarded to another site carries the forwarding
// attempt's traceparent beside its RFC 9421 signature, and the remote site's spans join the same
// trace — its request span's parent is the sending site's attempt span, and it follows the
// sending site's sampling decision (here: site c samples nothing of its own, yet records the
// forward that site a sampled).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { TwoSiteMesh } from '#test/fixtures/two-site-mesh.ts';
import {
  CLIENT,
  INTERNAL,
  SERVER,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '#test/fixtures/otlp-receiver.ts';

const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';

let receiver: OtlpReceiver;
let mesh: TwoSiteMesh;

before(async () => {
  receiver = await startOtlpReceiver();
  const tracing = (site: string, ratio: number): string =>
    `[tracing]\notlp_endpoint = "${receiver.url}"\nservice_name = "site-${site}"\nsample_ratio = ${ratio}`;
  mesh = new TwoSiteMesh({ heartbeatMs: 200, freshnessMs: 2_000, extraToml: { a: tracing('a', 1), c: tracing('c', 0) } });
  await mesh.start();
  await mesh.waitListed('a', 'm-c', 'c');
  await mesh.waitServed('a', 'm-c');
});

after(async () => {
  await mesh?.close();
  await receiver?.close();
});

test("the remote site's spans join the trace: its request span is a child of the forwarding attempt's span", async () => {
  const res = await request(`${mesh.site('a').gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
    body: JSON.stringify({ model: 'm-c', messages: [{ role: 'user', content: 'hello' }], max_tokens: 3 }),
    signal: AbortSignal.timeout(15_000),
  });
  await res.body.text();
  assert.equal(res.statusCode, 200);
  const inTrace = (spans: readonly ReceivedSpan[]): ReceivedSpan[] => spans.filter((s) => s.traceId === CLIENT_TRACE);
  const done = (spans: readonly ReceivedSpan[]): boolean =>
    inTrace(spans).filter((s) => s.kind === SERVER).length === 2 && inTrace(spans).filter((s) => s.kind === CLIENT).length === 2;
  await receiver.waitFor(done, "both sites' request and attempt spans");
  const spans = inTrace(receiver.spans);
  const at = (site: string, kind: number): ReceivedSpan[] => spans.filter((s) => s.service === `site-${site}` && s.kind === kind);

  const [requestA] = at('a', SERVER);
  assert.equal(requestA?.parentSpanId, CLIENT_SPAN);
  const [forward] = at('a', CLIENT);
  assert.equal(forward?.parentSpanId, requestA?.spanId);
  assert.equal(forward?.attributes['switchyard.site'], 'c');
  assert.equal(forward?.attributes['switchyard.attempt.outcome'], 'success');
  assert.equal(forward?.attributes['server.address'], '127.0.0.1');
  const routeA = spans.find(
    (s) => s.service === 'site-a' && s.kind === INTERNAL && s.attributes['switchyard.route.among'] === 'site',
  );
  assert.equal(routeA?.attributes['switchyard.route.chosen'], 'c', "site a's routing decision names the site");

  const [requestC] = at('c', SERVER);
  assert.equal(requestC?.parentSpanId, forward?.spanId, "site c's request span is the forwarding attempt's child");
  assert.equal(requestC?.attributes['switchyard.from_site'], 'a');
  assert.equal(requestC?.attributes['gen_ai.request.model'], 'm-c');
  const [attemptC] = at('c', CLIENT);
  assert.equal(attemptC?.parentSpanId, requestC?.spanId);
  assert.equal(attemptC?.attributes['switchyard.node'], 'c-gpu');
  assert.equal(attemptC?.attributes['switchyard.attempt.outcome'], 'success');
});
