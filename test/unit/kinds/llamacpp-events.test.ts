// Table: a llama-server router's `/models/sse` frames (llama.cpp b10573-14 server-models.cpp, quoted in
// docs/protocols.md "Pushed model state") read into the gateway's model events.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readRouterFrame, serverKind } from '#src/kinds/index.ts';

const URL_A = 'https://huggingface.co/org/repo/resolve/main/a.gguf';

const CASES: readonly { readonly name: string; readonly frame: unknown; readonly read: unknown }[] = [
  {
    name: 'a load starts (the router load())',
    frame: { model: 'm', event: 'model_status', data: { status: 'loading' } },
    read: { ok: true, event: { kind: 'status', model: 'm', status: 'loading' } },
  },
  {
    name: 'load progress (the child load callback)',
    frame: {
      model: 'm',
      event: 'status_change',
      data: { status: 'loading', progress: { stages: ['text_model'], current: 'text_model', value: 0.25 } },
    },
    read: {
      ok: true,
      event: { kind: 'status', model: 'm', status: 'loading', progress: { kind: 'load', stage: 'text_model', fraction: 0.25 } },
    },
  },
  {
    name: 'the mmproj stage (no value)',
    frame: { model: 'm', event: 'status_change', data: { status: 'loading', progress: { stage: 'mmproj_model' } } },
    read: {
      ok: true,
      event: { kind: 'status', model: 'm', status: 'loading', progress: { kind: 'load', stage: 'mmproj_model' } },
    },
  },
  {
    name: 'loaded, with the child model info',
    frame: { model: 'm', event: 'status_change', data: { status: 'loaded', info: { id: 'm', meta: { n_ctx: 4096 } } } },
    read: { ok: true, event: { kind: 'status', model: 'm', status: 'loaded' } },
  },
  {
    name: 'a wake from sleep (no info)',
    frame: { model: 'm', event: 'status_change', data: { status: 'loaded' } },
    read: { ok: true, event: { kind: 'status', model: 'm', status: 'loaded' } },
  },
  {
    name: 'asleep',
    frame: { model: 'm', event: 'status_change', data: { status: 'sleeping' } },
    read: { ok: true, event: { kind: 'status', model: 'm', status: 'sleeping' } },
  },
  {
    name: 'unloaded cleanly (exit code 0)',
    frame: { model: 'm', event: 'status_change', data: { status: 'unloaded', exit_code: 0 } },
    read: { ok: true, event: { kind: 'status', model: 'm', status: 'unloaded' } },
  },
  {
    name: 'a child killed (SIGKILL: EXIT_FAILURE, 1) is failed with its exit code',
    frame: { model: 'm', event: 'status_change', data: { status: 'unloaded', exit_code: 1 } },
    read: { ok: true, event: { kind: 'status', model: 'm', status: 'failed', exitCode: 1 } },
  },
  {
    name: 'a download starts',
    frame: { model: 'org/repo', event: 'model_status', data: { status: 'downloading' } },
    read: { ok: true, event: { kind: 'status', model: 'org/repo', status: 'downloading' } },
  },
  {
    name: 'download progress, summed over files',
    frame: {
      model: 'org/repo',
      event: 'download_progress',
      data: { progress: { [URL_A]: { done: 50, total: 100 }, b: { done: 0, total: 100 } } },
    },
    read: {
      ok: true,
      event: {
        kind: 'download',
        model: 'org/repo',
        progress: { kind: 'download', doneBytes: 50, totalBytes: 200, fraction: 0.25 },
      },
    },
  },
  {
    name: 'download finished',
    frame: { model: 'r', event: 'download_finished' },
    read: { ok: true, event: { kind: 'download_end', model: 'r', ok: true } },
  },
  {
    name: 'download failed',
    frame: { model: 'r', event: 'download_failed' },
    read: { ok: true, event: { kind: 'download_end', model: 'r', ok: false } },
  },
  { name: 'removed', frame: { model: 'r', event: 'model_remove' }, read: { ok: true, event: { kind: 'removed', model: 'r' } } },
  { name: 'models reload', frame: { model: '*', event: 'models_reload' }, read: { ok: true, event: { kind: 'relist' } } },
  {
    name: 'an event of a later build is ignored',
    frame: { model: 'm', event: 'model_renamed', data: {} },
    read: { ok: 'ignored' },
  },
  { name: 'not an object', frame: [1], read: { ok: false, error: 'frame is not a JSON object' } },
  { name: 'no event', frame: { model: 'm' }, read: { ok: false, error: "frame has no string 'event'" } },
  {
    name: 'no model',
    frame: { event: 'status_change', data: { status: 'loaded' } },
    read: { ok: false, error: "'status_change' frame has no model name" },
  },
  {
    name: 'no status',
    frame: { model: 'm', event: 'status_change', data: {} },
    read: { ok: false, error: "status frame for 'm' has no status" },
  },
];

for (const c of CASES) {
  test(`router frame: ${c.name}`, () => {
    assert.deepEqual(readRouterFrame(c.frame), c.read);
  });
}

test('only a llamacpp router pushes model state; a single server and the other kinds do not', () => {
  assert.equal(serverKind('llamacpp').modelEvents('router')?.path, '/models/sse');
  assert.equal(serverKind('llamacpp').modelEvents('single'), undefined);
  assert.equal(serverKind('llamacpp').modelEvents('unknown'), undefined);
  for (const kind of ['vllm', 'sglang', 'ollama', 'openai', 'auto'] as const)
    assert.equal(serverKind(kind).modelEvents('router'), undefined, kind);
});
