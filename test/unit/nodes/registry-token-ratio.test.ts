// NodeRegistry.learnTokenRatio (issue 21 item 1): every answer is learned from, but the view (and
// so routing's caches and the workers' mirrors) changes only when the envelope moves enough.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import { NodeRegistry, sameBesidesLearned, type NodeView, type RegistryEvents } from '#src/nodes/index.ts';
import { TOKEN_RATIO_MIN_SAMPLES } from '#src/capacity/index.ts';
import { spec } from '#test/fixtures/builders.ts';

test('learned ratios reach the view when they change, not on every answer', () => {
  const clock = new ManualClock();
  const registry = new NodeRegistry({ clock, events: new EventBus<RegistryEvents>(), failThreshold: 3 });
  registry.setNodes([spec('n')]);
  const url = registry.view('n')?.spec.url ?? '';
  const sample = { bytes: 3500, promptTokens: 1000, templateTokens: 24 };
  registry.learnTokenRatio('n', url, 'm', sample);
  const first = registry.views();
  assert.equal(first[0]?.tokenRatios?.m?.samples, 1);
  for (let i = 1; i < TOKEN_RATIO_MIN_SAMPLES - 1; i++) registry.learnTokenRatio('n', url, 'm', sample);
  assert.equal(registry.views(), first, 'the same answers again: the views are reused');
  registry.learnTokenRatio('n', url, 'm', sample);
  assert.equal(registry.views()[0]?.tokenRatios?.m?.samples, TOKEN_RATIO_MIN_SAMPLES, 'usable now: published');
  registry.learnTokenRatio('n', 'http://elsewhere:1', 'm', { bytes: 3500, promptTokens: 3500, templateTokens: 0 });
  assert.equal(registry.views()[0]?.tokenRatios?.m?.low, 3.5, 'an answer from a former URL of the node is ignored');
});

test('a view rebuilt for a learned figure differs from the one before in its learned figures only', () => {
  const clock = new ManualClock();
  const registry = new NodeRegistry({ clock, events: new EventBus<RegistryEvents>(), failThreshold: 3 });
  registry.setNodes([spec('n')]);
  const url = registry.view('n')?.spec.url ?? '';
  const before = registry.view('n') as NodeView;
  registry.learnDecodeRate('n', url, 'm', { tokens: 400, decodeMs: 1000 });
  registry.learnTokenRatio('n', url, 'm', { bytes: 3500, promptTokens: 1000, templateTokens: 24 });
  const after = registry.view('n') as NodeView;
  assert.notEqual(after, before, 'a new view: its readers see the new figures at once');
  assert.equal(after.tokenRatios?.m?.samples, 1);
  assert.ok(sameBesidesLearned(before, after), 'spec, health, listing, capacity and facts are the same objects');
  registry.observeHealth('n', { ok: false, error: 'refused' });
  assert.equal(sameBesidesLearned(after, registry.view('n') as NodeView), false, 'a health change is more than a learned figure');
});
