// The `switchyard status` table from a hosts report: one line per node, the columns an operator
// reads, and the exit code scripts read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { HostsReport, HostView } from '#src/admin/index.ts';
import { STATUS_NODE_DEAD, STATUS_OK, statusExitCode, statusSummary, statusTable } from '#src/cli/status-table.ts';

function host(name: string, overrides: Partial<HostView> = {}): HostView {
  return {
    name,
    url: `http://127.0.0.1:1/${name}`,
    kind: 'vllm',
    kv: 'unified',
    role: 'single',
    health: { status: 'healthy', fails: 0, last_error: null },
    wake: null,
    discovery: { state: 'known', fails: 0, last_error: null },
    loaded: [],
    available_on_demand: [],
    models: {},
    in_flight: 0,
    leases: {},
    router: null,
    load: null,
    ...overrides,
  };
}

const REPORT: HostsReport = {
  hosts: [
    host('gpu-1', {
      loaded: ['llama', 'qwen'],
      models: { llama: { n_ctx: 8192, slots: 4, guaranteed_ctx: 2048 }, qwen: { n_ctx: 32768, slots: 2, guaranteed_ctx: 16384 } },
      leases: { llama: { requests: 3, tokens: 900 } },
    }),
    host('router', {
      kind: 'llamacpp',
      loaded: ['gemma'],
      available_on_demand: [{ id: 'big', status: 'unloaded' }],
      models: { gemma: { n_ctx: 4096, slots: null, guaranteed_ctx: 4096 } },
    }),
    host('down', {
      health: {
        status: 'dead',
        fails: 5,
        last_error: 'connect ECONNREFUSED 127.0.0.1:9\n   (after 3 tries) and a long explanation that goes on and on',
      },
      discovery: { state: 'degraded', fails: 1, last_error: 'timed out' },
    }),
  ],
  queue_depth: { llama: 2, big: 1 },
};

test('one line per node under a header, with every column the operator reads', () => {
  const lines = statusTable(REPORT);
  assert.equal(lines.length, 4);
  assert.match(lines[0] ?? '', /^NODE +KIND +HEALTH +DISCOVERY +LOADED\/ON-DEMAND +CTX +SLOTS +QUEUE +LAST ERROR$/);
  const cells = lines.slice(1).map((line) => line.split(/ {2,}/));
  assert.deepEqual(cells[0], ['gpu-1', 'vllm', 'healthy', 'known', '2/0', '8192-32768', '3/6', '2']);
  assert.deepEqual(cells[1], ['router', 'llamacpp', 'healthy', 'known', '1/1', '4096', '0/?', '1']);
  assert.deepEqual(cells[2]?.slice(0, 8), ['down', 'vllm', 'dead', 'degraded', '0/0', '-', '0/?', '0']);
  assert.equal(cells[2]?.[8], 'connect ECONNREFUSED 127.0.0.1:9 (after 3 tries) and a long…', 'one line, cut to 60 characters');
});

test('the columns line up: every cell starts where its header does', () => {
  const lines = statusTable(REPORT);
  const start = (lines[0] ?? '').indexOf('HEALTH');
  for (const line of lines.slice(1)) assert.ok(/^(healthy|dead)/.test(line.slice(start)), line);
});

test('the exit code is 1 when any node is dead, else 0', () => {
  assert.equal(statusExitCode(REPORT), STATUS_NODE_DEAD);
  assert.equal(statusExitCode({ ...REPORT, hosts: REPORT.hosts.slice(0, 2) }), STATUS_OK);
  assert.equal(statusExitCode({ hosts: [], queue_depth: {} }), STATUS_OK);
});

test('the summary counts nodes by health and the requests queued', () => {
  assert.equal(statusSummary(REPORT), '3 nodes: 2 healthy, 0 degraded, 1 dead; 3 requests queued');
  assert.equal(
    statusSummary({ hosts: [host('a')], queue_depth: {} }),
    '1 node: 1 healthy, 0 degraded, 0 dead; 0 requests queued',
  );
});

test('a waking node says so beside its health', () => {
  const waking = host('desk', {
    health: { status: 'dead', fails: 3, last_error: null },
    wake: { method: 'wol', waking: true, last_sent_at: null },
  });
  assert.match(statusTable({ hosts: [waking], queue_depth: {} })[1] ?? '', /dead \(waking\)/);
});
