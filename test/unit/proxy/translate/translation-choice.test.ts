// When a request is translated (src/proxy/translate/translation-choice.ts over routing's
// modelSpeaks): never where a node for the model speaks the client's API natively; only where some
// node for it speaks the translation's node API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { InferenceEndpoint } from '#src/config/index.ts';
import { modelSpeaks } from '#src/routing/index.ts';
import { chooseTranslation, translationFor } from '#src/proxy/translate/translation-choice.ts';
import { TRANSLATIONS } from '#src/translate/translations.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { node } from '#test/fixtures/builders.ts';

const MESSAGES = TRANSLATIONS.filter((t) => t.client === '/v1/messages');

const CASES: readonly { name: string; nodes: ReturnType<typeof node>[]; translated: string | undefined }[] = [
  {
    name: 'only Chat Completions nodes serve the model: translated',
    nodes: [node('a', { kind: 'openai', models: ['m'] })],
    translated: 'messages→chat',
  },
  {
    name: 'a native node serves the model beside them: never translated',
    nodes: [node('a', { kind: 'openai', models: ['m'] }), node('l', { kind: 'llamacpp', models: ['m'] })],
    translated: undefined,
  },
  {
    name: 'the native node serves another model only: translated',
    nodes: [node('a', { kind: 'openai', models: ['m'] }), node('l', { kind: 'llamacpp', models: ['other'] })],
    translated: 'messages→chat',
  },
  {
    name: 'no node serves the model: left as it came (its refusal says why)',
    nodes: [node('a', { kind: 'openai', models: ['x'] })],
    translated: undefined,
  },
  { name: 'an empty fleet: left as it came', nodes: [], translated: undefined },
];

for (const c of CASES) {
  test(c.name, () => {
    const speaks = (endpoint: InferenceEndpoint): boolean => modelSpeaks(c.nodes, 'm', endpoint);
    assert.equal(chooseTranslation('/v1/messages', MESSAGES, speaks)?.name, c.translated);
  });
}

test('the first listed translation whose node API is spoken wins; none spoken, none chosen', () => {
  const [first] = MESSAGES;
  assert.ok(first !== undefined);
  const second = { ...first, name: 'second', node: '/v1/completions' as const };
  assert.equal(chooseTranslation('/v1/messages', [first, second], (e) => e !== '/v1/messages')?.name, first.name);
  assert.equal(chooseTranslation('/v1/messages', [first, second], (e) => e === '/v1/completions')?.name, 'second');
  assert.equal(
    chooseTranslation('/v1/messages', [first, second], () => false),
    undefined,
  );
});

test('nodes the request found lacking the client endpoint (route-level 404s) are judged so, the fleet view not yet showing it', () => {
  // An SGLang node is taken to speak /v1/messages until it answers it with a route-level 404.
  const views = [node('sg', { kind: 'sglang', models: ['m'] }), node('a', { kind: 'openai', models: ['m'] })];
  assert.equal(translationFor(MESSAGES, '/v1/messages', 'm', views)?.name, undefined, 'before routing: sg speaks it natively');
  assert.equal(translationFor(MESSAGES, '/v1/messages', 'm', views, new Set(['sg']))?.name, 'messages→chat');
  // Its lack of /v1/messages says nothing of its Chat Completions: alone, it still carries the translation.
  assert.equal(translationFor(MESSAGES, '/v1/messages', 'm', [views[0] as NodeView], new Set(['sg']))?.name, 'messages→chat');
  // Another native node for the model, not asked (another name): never translated.
  const native = [...views, node('l', { kind: 'llamacpp', models: ['m'] })];
  assert.equal(translationFor(MESSAGES, '/v1/messages', 'm', native, new Set(['sg'])), undefined);
  // The Responses translation, for a node the kind's set (auto: every endpoint) was wrong about.
  const responses = TRANSLATIONS.filter((t) => t.client === '/v1/responses');
  const auto = [node('x', { kind: 'auto', models: ['m'] })];
  assert.equal(translationFor(responses, '/v1/responses', 'm', auto), undefined);
  assert.equal(translationFor(responses, '/v1/responses', 'm', auto, new Set(['x']))?.name, 'responses→chat');
});
