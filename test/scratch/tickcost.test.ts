import { test } from 'node:test';
import { tempStateDir } from '#test/fixtures/state-dirs.ts';
import { chat, createJob, startHarness } from '#test/unit/batch/runner-harness.ts';
test('tick cost', async () => {
  const t = tempStateDir();
  const h = startHarness(t.dir, { room: () => 0 });
  const id = await createJob(h, Array.from({ length: 10000 }, (_, i) => chat(`c${i}`)));
  h.runner.start();
  await h.until(() => h.store.batch(id)?.status === 'in_progress', 'validated');
  const time = (name: string, fn: () => unknown) => { const t0 = performance.now(); for (let i = 0; i < 50; i++) fn(); console.log(name, ((performance.now() - t0) / 50).toFixed(3), 'ms'); };
  const now = h.clock.now();
  time('running', () => h.store.running());
  time('counts', () => h.store.counts(id));
  time('waitingModels', () => h.store.waitingModels(id, now));
  time('takeLines(1)', () => h.store.takeLines(id, 'm', 1, now));
  await h.stop(); t.remove();
});
