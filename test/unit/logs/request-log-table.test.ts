// `[log]`: where request lines go, and the file's bounds; anything else is named.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatProblems } from '#src/config/load.ts';
import { loadConfig } from '#src/config-tables.ts';
import { LOG_DEFAULTS } from '#src/logs/request-log-table.ts';

const ONE_NODE = '[[nodes]]\nname = "gpu-a"\nurl = "http://10.0.0.5:8000"\n';

test('no [log]: the request log is off, with the documented defaults', () => {
  const result = loadConfig(ONE_NODE, {});
  assert.ok(result.ok, result.ok ? '' : formatProblems(result.problems));
  assert.deepEqual(result.config.log, LOG_DEFAULTS);
  assert.deepEqual(LOG_DEFAULTS, {
    requests: { kind: 'off' },
    requestsMaxBytes: 100 * 1024 * 1024,
    requestsKeep: 5,
    requestsBufferLines: 10_000,
    bodies: false,
    bodiesMaxBytes: 4096,
  });
});

const GOOD: readonly { toml: string; expect: Record<string, unknown> }[] = [
  { toml: 'requests = "off"', expect: { requests: { kind: 'off' } } },
  { toml: 'requests = "stdout"', expect: { requests: { kind: 'stdout' } } },
  {
    toml: 'requests = "/var/log/switchyard/requests.log"',
    expect: { requests: { kind: 'file', path: '/var/log/switchyard/requests.log' } },
  },
  {
    toml: 'requests = "requests.log"\nrequests_max_bytes = "10MiB"\nrequests_keep = 0',
    expect: { requests: { kind: 'file', path: 'requests.log' }, requestsMaxBytes: 10 * 1024 * 1024, requestsKeep: 0 },
  },
  { toml: 'requests_buffer_lines = 1', expect: { requestsBufferLines: 1 } },
  { toml: 'bodies = true', expect: { bodies: true } },
  { toml: 'bodies = true\nbodies_max_bytes = "64KiB"', expect: { bodies: true, bodiesMaxBytes: 64 * 1024 } },
];

for (const c of GOOD) {
  test(`[log] ${c.toml.replaceAll('\n', '; ')}`, () => {
    const result = loadConfig(`[log]\n${c.toml}\n${ONE_NODE}`, {});
    assert.ok(result.ok, result.ok ? '' : formatProblems(result.problems));
    assert.deepEqual(result.config.log, { ...LOG_DEFAULTS, ...c.expect });
  });
}

const BAD: readonly { toml: string; path: string; message: RegExp }[] = [
  { toml: 'requests = ""', path: 'log.requests', message: /"off", "stdout", or the path/ },
  { toml: 'requests = " x.log"', path: 'log.requests', message: /"off", "stdout", or the path/ },
  { toml: 'requests = true', path: 'log.requests', message: /"off", "stdout", or the path/ },
  { toml: 'requests_max_bytes = 0', path: 'log.requests_max_bytes', message: /more than 0 bytes/ },
  { toml: 'requests_keep = -1', path: 'log.requests_keep', message: /whole number from 0 to 100/ },
  { toml: 'requests_keep = 101', path: 'log.requests_keep', message: /whole number from 0 to 100/ },
  { toml: 'requests_buffer_lines = 0', path: 'log.requests_buffer_lines', message: /whole number from 1 to 1000000/ },
  { toml: 'bodies = "yes"', path: 'log.bodies', message: /true or false/ },
  { toml: 'bodies_max_bytes = "2MiB"', path: 'log.bodies_max_bytes', message: /at most 1MiB/ },
  { toml: 'bodies_max_bytes = 0', path: 'log.bodies_max_bytes', message: /more than 0 bytes/ },
  { toml: 'body = true', path: 'log.body', message: /unknown key/ },
];

for (const c of BAD) {
  test(`[log] ${c.toml} is a problem at ${c.path}`, () => {
    const result = loadConfig(`[log]\n${c.toml}\n${ONE_NODE}`, {});
    assert.ok(!result.ok, 'expected a problem');
    const problem = result.problems.find((p) => p.path === c.path);
    assert.ok(problem !== undefined, formatProblems(result.problems));
    assert.match(problem.message, c.message);
  });
}
