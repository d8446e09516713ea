// When a request is translated (src/proxy/translate/translation-choice.ts over routing's
// modelSpeaks): never where a node for the model speaks the client's API natively; only where some
// node for it speaks the translation's node API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { InferenceEndpoint } from '#src/config/index.ts';
import { modelSpeaks } from '#src/routing/index.ts';
import { chooseTranslation } from '#src/proxy/translate/translation-choice.ts';
import { TRANSLATIONS } from '#src/translate/translations.ts';
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
