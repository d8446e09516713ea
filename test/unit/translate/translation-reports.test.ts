// What a translated request reports (src/translate/translation-reports.ts, issue 39): its own field
// (the translation's name) gives the request log's `translated` just after `endpoint` and counts
// gateway_translated_requests_total by translation and status; /admin/explain's part names the
// translation and the endpoint the nodes are judged on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { observeFields, reportsTable } from '#src/core/request-fields.ts';
import { requestLineText } from '#src/logs/request-line.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import { translatedFields } from '#src/translate/translated-field.ts';
import { TranslationFeature } from '#src/translate/translation-feature.ts';

type Finished = ProxyEvents['proxy:request-finished'];

const feature = (on = true): TranslationFeature =>
  new TranslationFeature({
    on: () => on,
    choose: (endpoint, model) =>
      endpoint === '/v1/messages' && model === 'coder' ? { name: 'messages→chat', node: '/v1/chat/completions' } : undefined,
  });

const finished = (over: Partial<Finished> = {}): Finished => ({
  endpoint: '/v1/messages',
  model: 'coder',
  node: 'n1',
  status: 200,
  durationMs: 1,
  firstByteMs: undefined,
  brokenError: undefined,
  clientAborted: false,
  tenant: 'default',
  ...over,
});

test('the request log line: `translated` just after `endpoint`, byte for byte as it was written before the move', () => {
  const reports = reportsTable([feature().reports]);
  const text = requestLineText(finished({ fields: translatedFields('messages→chat') }), Date.UTC(2026, 0, 1), () => reports);
  assert.equal(
    text,
    '{"time":"2026-01-01T00:00:00.000Z","request_id":"","tenant":"default","endpoint":"/v1/messages","translated":"messages→chat","attempts":[],"status":200,"queue_wait_ms":0,"duration_ms":1,"bytes_in":0,"bytes_out":0}\n',
  );
  const plain = requestLineText(finished(), Date.UTC(2026, 0, 1), () => reports);
  assert.ok(!plain.includes('translated'), plain);
});

test('gateway_translated_requests_total counts the requests that carry the field, by translation and status', async () => {
  const translation = feature();
  const registry = new Registry();
  translation.metrics(registry);
  const reports = reportsTable([translation.reports]);
  for (const status of [200, 200, 400]) {
    const request = finished({ status, fields: translatedFields('messages→chat') });
    observeFields(reports, request, request.fields ?? {});
  }
  const text = await registry.metrics();
  assert.match(text, /gateway_translated_requests_total\{translation="messages→chat",status="200"\} 2\n/);
  assert.match(text, /gateway_translated_requests_total\{translation="messages→chat",status="400"\} 1\n/);
});

test('/admin/explain’s part: the translation and the endpoint judged, only where one serves the endpoint asked and translation is on', () => {
  assert.deepEqual(feature().explain({ model: 'coder', endpoint: '/v1/messages' }), {
    endpoint: '/v1/chat/completions',
    fields: { translated: { translation: 'messages→chat', endpoint: '/v1/chat/completions' } },
  });
  assert.equal(feature().explain({ model: 'coder', endpoint: '/v1/chat/completions' }), undefined);
  assert.equal(feature().explain({ model: 'coder', endpoint: undefined }), undefined);
  assert.equal(feature().explain({ model: 'coder', endpoint: '/not/an/endpoint' }), undefined);
  assert.equal(feature(false).explain({ model: 'coder', endpoint: '/v1/messages' }), undefined);
});
