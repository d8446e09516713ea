// check-config's summary names each [[node_sources]] entry: what it asks, where, and never its key.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '#src/config-tables.ts';
import { describeConfig } from '#src/cli/config-summary.ts';

test('a DNS node source is summarised with its query, resolver and bounds; the api key only as set', () => {
  const loaded = loadConfig(
    '[[node_sources]]\nkind = "dns"\nname = "gpu"\nhost = "vllm.svc"\nport = 8000\nnode_kind = "vllm"\napi_key = "sekrit"\nresolver = "127.0.0.1:5353"\n',
    {},
  );
  assert.ok(loaded.ok);
  const lines = describeConfig(loaded.config);
  assert.ok(lines.includes('node sources (1):'), lines.join('\n'));
  assert.ok(
    lines.includes('  gpu  dns vllm.svc port 8000  vllm  resolver 127.0.0.1:5353, every 30s (ttl 5s..5m)  (api key set)'),
    lines.join('\n'),
  );
  assert.ok(!lines.join('\n').includes('sekrit'));
});
