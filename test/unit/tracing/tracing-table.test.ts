import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '#src/config-tables.ts';

const ONE_NODE = '[[nodes]]\nname = "n"\nurl = "http://127.0.0.1:8000"';
const load = (tracing: string | undefined) => loadConfig(`${tracing ?? ''}\n${ONE_NODE}`, {});

test('[tracing] is off when absent', () => {
  const loaded = load(undefined);
  assert.ok(loaded.ok);
  assert.equal(loaded.config.tracing, undefined);
});

test('[tracing] with an endpoint: service_name "switchyard" and sample_ratio 1 by default', () => {
  const loaded = load('[tracing]\notlp_endpoint = "http://127.0.0.1:4318/v1/traces"');
  assert.ok(loaded.ok);
  assert.deepEqual(loaded.config.tracing, {
    otlpEndpoint: 'http://127.0.0.1:4318/v1/traces',
    serviceName: 'switchyard',
    sampleRatio: 1,
  });
});

test('[tracing] takes every key', () => {
  const loaded = load(
    '[tracing]\notlp_endpoint = "https://otel.example:4318/v1/traces"\nservice_name = "gw-eu"\nsample_ratio = 0.25',
  );
  assert.ok(loaded.ok);
  assert.deepEqual(loaded.config.tracing, {
    otlpEndpoint: 'https://otel.example:4318/v1/traces',
    serviceName: 'gw-eu',
    sampleRatio: 0.25,
  });
});

const BAD: readonly [string, string, RegExp][] = [
  ['no endpoint', '[tracing]\nservice_name = "x"', /tracing\.otlp_endpoint/],
  ['not a URL', '[tracing]\notlp_endpoint = "collector:4318"', /OTLP\/HTTP traces receiver/],
  ['not http', '[tracing]\notlp_endpoint = "grpc://127.0.0.1:4317"', /OTLP\/HTTP traces receiver/],
  ['credentials in the URL', '[tracing]\notlp_endpoint = "http://u:p@127.0.0.1:4318/v1/traces"', /OTLP\/HTTP traces receiver/],
  ['ratio above 1', '[tracing]\notlp_endpoint = "http://127.0.0.1:4318/v1/traces"\nsample_ratio = 2', /from 0 to 1/],
  ['ratio below 0', '[tracing]\notlp_endpoint = "http://127.0.0.1:4318/v1/traces"\nsample_ratio = -0.1', /from 0 to 1/],
  ['empty service name', '[tracing]\notlp_endpoint = "http://127.0.0.1:4318/v1/traces"\nservice_name = ""', /non-empty/],
  [
    'unknown key',
    '[tracing]\notlp_endpoint = "http://127.0.0.1:4318/v1/traces"\nendpoint = "x"',
    /unknown key; expected one of: otlp_endpoint, service_name, sample_ratio/,
  ],
];

for (const [what, toml, message] of BAD) {
  test(`[tracing] refused: ${what}`, () => {
    const loaded = load(toml);
    assert.ok(!loaded.ok);
    const text = loaded.problems.map((p) => `${p.path}: ${p.message}`).join('\n');
    assert.match(text, message);
    assert.match(text, /^tracing/m);
  });
}
