// The nodes that may serve a model (nodes/model-offers.ts): exactly the views that list it or whose
// listing is not known yet, in config order, worked out once per views array — so a request reads
// those few instead of every view of a large fleet (issue 42), with the same answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import { residencyOf } from '#src/capacity/index.ts';
import { MODEL_OFFERS_MAX_MODELS, ModelOffers } from '#src/nodes/model-offers.ts';
import { NodeRegistry, type RegistryEvents } from '#src/nodes/index.ts';
import { model, node, spec } from '#test/fixtures/builders.ts';

function registry(): NodeRegistry {
  const events = new EventBus<RegistryEvents>((error) => {
    throw error;
  });
  return new NodeRegistry({ clock: new ManualClock(), events, failThreshold: 3 });
}

test('the offering is every view whose model is not absent, in config order (the views a reader would not skip)', () => {
  const reg = registry();
  reg.setNodes(['a', 'b', 'c', 'd'].map((name, i) => spec(name, { url: `http://127.0.0.1:${i + 1}`, kind: 'vllm' })));
  reg.observeDiscovery('a', { ok: true, models: [model('x'), model('y')] });
  reg.observeDiscovery('b', { ok: true, models: [model('y')] });
  reg.observeDiscovery('d', { ok: true, models: [model('x', { loaded: false, status: 'sleeping' })] });
  // c is untried: presumed to have what is asked.
  for (const asked of ['x', 'y', 'z']) {
    const expected = reg.views().filter((view) => residencyOf(view, asked).state !== 'absent');
    assert.deepEqual(
      reg.offering(asked).map((view) => view.spec.name),
      expected.map((view) => view.spec.name),
      asked,
    );
    assert.ok(
      reg.offering(asked).every((view, i) => view === expected[i]),
      'the views themselves',
    );
  }
  assert.deepEqual(
    reg.offering('x').map((v) => v.spec.name),
    ['a', 'c', 'd'],
  );
});

test('one array per views array and model; a routing-relevant change gives a new one', () => {
  const reg = registry();
  reg.setNodes([spec('a', { url: 'http://127.0.0.1:1', kind: 'vllm' }), spec('b', { url: 'http://127.0.0.1:2', kind: 'vllm' })]);
  reg.observeDiscovery('a', { ok: true, models: [model('x')] });
  reg.observeDiscovery('b', { ok: true, models: [model('y')] });
  const first = reg.offering('x');
  assert.equal(reg.offering('x'), first, 'asked again: the same array, no scan');
  reg.observeDiscovery('b', { ok: true, models: [model('y'), model('x')] });
  assert.deepEqual(
    reg.offering('x').map((v) => v.spec.name),
    ['a', 'b'],
    'the new listing counts at once',
  );
});

test('a holder remembers a bounded number of models (clients may name any)', () => {
  const offers = new ModelOffers();
  const views = [node('a', { models: ['x'] }), node('b', { models: ['y'] })];
  const x = offers.of(views, 'x');
  for (let i = 0; i < MODEL_OFFERS_MAX_MODELS; i += 1) offers.of(views, `unknown-${i}`);
  const again = offers.of(views, 'x');
  assert.notEqual(again, x, 'forgotten past the bound, worked out again');
  assert.deepEqual(again, x);
  assert.deepEqual(offers.of(views, 'nobody'), []);
});
