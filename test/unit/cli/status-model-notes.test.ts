// `switchyard status` notes each router model whose status says more than loaded or not: a failed
// child with its exit code, a download with its progress, a sleep, and a status the gateway does not
// know — with why routing holds it back; plain statuses and rows not shaped as expected get none.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { HostsReport, HostView } from '#src/admin/index.ts';
import { modelNotes, switchQueueNotes } from '#src/cli/status-table.ts';

function router(available: HostView['available_on_demand']): HostView {
  return {
    name: 'router',
    url: 'http://127.0.0.1:1',
    kind: 'llamacpp',
    kv: 'unified',
    role: 'router',
    health: { status: 'healthy', fails: 0, last_error: null },
    wake: null,
    discovery: { state: 'known', fails: 0, last_error: null },
    loaded: ['a'],
    available_on_demand: available,
    models: {},
    in_flight: 0,
    leases: {},
    router: { max_instances: 2, models_autoload: true },
    load: null,
  };
}

test('one note per model with a status worth telling, none for plain ones', () => {
  const report: HostsReport = {
    hosts: [
      router([
        { id: 'b', status: 'unloaded' },
        { id: 'c', status: 'failed', exit_code: 1, held: 'its instance on the router exited with code 1 (failed)' },
        {
          id: 'org/d',
          status: 'downloading',
          progress: { fraction: 0.42, stage: null, done_bytes: 42, total_bytes: 100 },
          held: 'downloading (42%)',
        },
        { id: 'e', status: 'sleeping' },
        { id: 'f', status: 'hibernating', unknown_status: true },
        { id: 'g', status: 'loading' },
      ]),
    ],
    queue_depth: {},
  };
  assert.deepEqual(modelNotes(report), [
    'router: c failed (exit code 1) — not routed: its instance on the router exited with code 1 (failed)',
    'router: org/d downloading 42% — not routed: downloading (42%)',
    'router: e sleeping',
    'router: f hibernating (a status this gateway does not know; kept, routed as on demand)',
  ]);
});

test('a row not shaped as the CLI knows it (from a gateway it cannot vouch for) is left out, control characters shown', () => {
  const odd = [
    { id: 7, status: 'failed' },
    { id: 'x\u001b[2J', status: 'failed', exit_code: 'one' },
  ] as unknown as HostView['available_on_demand'];
  assert.deepEqual(modelNotes({ hosts: [router(odd)], queue_depth: {} }), ['router: x\\x1b[2J failed']);
});

test('one note per router naming who holds its switch queue and why; none for a node without one or an odd row', () => {
  const held = (name: string, switchQueue: unknown): HostView =>
    ({ ...router([]), name, ...(switchQueue === undefined ? {} : { switch_queue: switchQueue }) }) as HostView;
  const report: HostsReport = {
    hosts: [
      held('new', { holder: 'router', reason: 'its build b10587 queues per model itself' }),
      held('old', { holder: 'gateway', reason: "its build b10200 predates the router's own queue (b10313)" }),
      held('plain', undefined),
      held('odd', { holder: 1, reason: null }),
      held('esc', { holder: 'gateway', reason: 'x\u001b[2J' }),
    ],
    queue_depth: {},
  };
  assert.deepEqual(switchQueueNotes(report), [
    'new: switch queue held by the router — its build b10587 queues per model itself',
    "old: switch queue held by the gateway — its build b10200 predates the router's own queue (b10313)",
    'esc: switch queue held by the gateway — x\\x1b[2J',
  ]);
});
