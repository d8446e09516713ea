// A router listing's statuses (llama.cpp b10573-14 get_router_models): `sleeping`, `downloading`,
// `downloaded`, a failed child (`unloaded` + `failed: true, exit_code`), and a value no build the
// gateway knows sends: each read, and which ones hold a listed model back from routing, with why.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { entryHold, isKnownStatus, isRunningEntry, serverKind } from '#src/kinds/index.ts';

const read = (status: Record<string, unknown>): ReturnType<ReturnType<typeof serverKind>['listingEntry']> =>
  serverKind('llamacpp').listingEntry({ id: 'm', object: 'model', owned_by: 'llamacpp', status }, 'm');

test('a failed child is read as status failed with its exit code', () => {
  const entry = read({ value: 'unloaded', args: [], exit_code: 137, failed: true });
  assert.equal(entry.status, 'failed');
  assert.equal(entry.exitCode, 137);
  assert.equal(entry.loaded, false);
  assert.equal(isRunningEntry(entry), false);
  assert.deepEqual(entryHold(entry), {
    reason: 'failed',
    detail:
      'its instance on the router exited with code 137 (failed); routed again once it loads or the router lists it otherwise',
  });
});

test('an unloaded model that did not fail is neither failed nor held', () => {
  const entry = read({ value: 'unloaded', args: [] });
  assert.equal(entry.status, 'unloaded');
  assert.equal(entry.exitCode, undefined);
  assert.equal(entryHold(entry), undefined);
});

test('sleeping is running (counts against max_instances) and not held: a request wakes it', () => {
  const entry = read({ value: 'sleeping', args: [] });
  assert.equal(isRunningEntry(entry), true);
  assert.equal(entryHold(entry), undefined);
});

test('downloading and downloaded are held back, with the progress the stream told', () => {
  const downloading = read({ value: 'downloading', args: [] });
  assert.equal(isRunningEntry(downloading), false);
  assert.deepEqual(entryHold(downloading), { reason: 'downloading', detail: 'downloading; not a model the router can load yet' });
  assert.deepEqual(
    entryHold({ ...downloading, progress: { kind: 'download', fraction: 0.5, doneBytes: 1.5e9, totalBytes: 3e9 } }),
    { reason: 'downloading', detail: 'downloading (50%, 1.5 of 3.0 GB); not a model the router can load yet' },
  );
  assert.equal(entryHold(read({ value: 'downloaded', args: [] }))?.reason, 'downloading');
});

test('an unknown status value is kept (not a parse error), routed as on demand, and known to be unknown', () => {
  const entry = read({ value: 'hibernating', args: [] });
  assert.equal(entry.status, 'hibernating');
  assert.equal(entry.loaded, false);
  assert.equal(entryHold(entry), undefined);
  assert.equal(isKnownStatus('hibernating'), false);
  for (const known of ['loaded', 'loading', 'unloaded', 'sleeping', 'downloading', 'downloaded', 'failed', undefined])
    assert.equal(isKnownStatus(known), true, String(known));
});
