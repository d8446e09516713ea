import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '#src/config-tables.ts';
import { restartOnlyChanges } from '#src/config-tables.ts';

const node = '[[nodes]]\nname = "a"\nurl = "http://10.0.0.1:8000"\n';

function config(extra: string) {
  const result = loadConfig(`${extra}\n${node}`, {});
  assert.ok(result.ok);
  return result.config;
}

test('a reload names the settings that need a restart, and only those', () => {
  const before = config('[server]\nlisten = "127.0.0.1:8080"\n');
  assert.deepEqual(restartOnlyChanges(before, config('[server]\nlisten = "127.0.0.1:8080"\ndrain_timeout = "5s"\n')), []);
  assert.deepEqual(
    restartOnlyChanges(
      before,
      config('[server]\nlisten = "127.0.0.1:9090"\nheader_timeout = "2s"\n[admin]\nlisten = "127.0.0.1:9091"\n'),
    ),
    ['server.listen', 'server.header_timeout', 'admin.listen'],
  );
});

test('the cache-aware prefix tree size needs a restart; the other policy settings do not', () => {
  const before = config('[server]\nlisten = "127.0.0.1:8080"\n');
  assert.deepEqual(
    restartOnlyChanges(
      before,
      config('[server]\nlisten = "127.0.0.1:8080"\n[routing]\npolicy = "cache-aware"\ncache_threshold = 0.7\n'),
    ),
    [],
  );
  assert.deepEqual(
    restartOnlyChanges(before, config('[server]\nlisten = "127.0.0.1:8080"\n[routing]\ncache_max_tree_chars = 1000\n')),
    ['routing.cache_max_tree_chars'],
  );
});

test('the number of workers needs a restart', () => {
  const before = config('[server]\nlisten = "127.0.0.1:8080"\n');
  assert.deepEqual(restartOnlyChanges(before, config('[server]\nlisten = "127.0.0.1:8080"\nworkers = 2\n')), ['server.workers']);
  assert.deepEqual(restartOnlyChanges(before, config('[server]\nlisten = "127.0.0.1:8080"\nworkers = 1\n')), []);
});

test('the state directory needs a restart (the state file is opened once, at start)', () => {
  const before = config('[server]\nlisten = "127.0.0.1:8080"\n');
  assert.deepEqual(
    restartOnlyChanges(before, config('[server]\nlisten = "127.0.0.1:8080"\nstate_dir = "/var/lib/switchyard"\n')),
    ['server.state_dir'],
  );
});

test('the request log ([log]) needs a restart; an unchanged one does not', () => {
  const before = config('[log]\nrequests = "/var/log/switchyard/requests.log"\n');
  assert.deepEqual(restartOnlyChanges(before, config('[log]\nrequests = "/var/log/switchyard/requests.log"\n')), []);
  assert.deepEqual(restartOnlyChanges(before, config('[log]\nrequests = "stdout"\n')), ['log']);
  assert.deepEqual(
    restartOnlyChanges(before, config('[log]\nrequests = "/var/log/switchyard/requests.log"\nrequests_keep = 9\n')),
    ['log'],
  );
});

test('tracing ([tracing]) needs a restart: each request plane builds its tracer once', () => {
  const on = '[tracing]\notlp_endpoint = "http://127.0.0.1:4318/v1/traces"\n';
  assert.deepEqual(restartOnlyChanges(config(on), config(on)), []);
  assert.deepEqual(restartOnlyChanges(config(''), config(on)), ['tracing']);
  assert.deepEqual(restartOnlyChanges(config(on), config(`${on}sample_ratio = 0.5\n`)), ['tracing']);
});
