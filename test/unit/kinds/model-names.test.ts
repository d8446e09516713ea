// How each kind of server maps a request's model name to a listed id (ServerKind.resolveModelName).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeKind } from '#src/config/index.ts';
import { ollamaFullName, serverKind, serverKinds, type ListedName } from '#src/kinds/index.ts';

const listing = (...models: ListedName[]): ReadonlyMap<string, ListedName> => new Map(models.map((m) => [m.id, m]));
const id = (name: string, aliases: readonly string[] = []): ListedName => ({ id: name, aliases });

test("ollamaFullName fills Ollama's defaults: host registry.ollama.ai, namespace library, tag latest", () => {
  const table: [string, string | undefined][] = [
    ['llama3.2', 'registry.ollama.ai/library/llama3.2:latest'],
    ['llama3.2:latest', 'registry.ollama.ai/library/llama3.2:latest'],
    ['library/llama3.2', 'registry.ollama.ai/library/llama3.2:latest'],
    ['registry.ollama.ai/library/llama3.2:latest', 'registry.ollama.ai/library/llama3.2:latest'],
    ['llama3.2:1b', 'registry.ollama.ai/library/llama3.2:1b'],
    ['user/model', 'registry.ollama.ai/user/model:latest'],
    ['hf.co/org/repo:Q4_K_M', 'hf.co/org/repo:Q4_K_M'],
    ['localhost:5000/ns/m', 'localhost:5000/ns/m:latest'],
    ['llama3.2@sha256:abc', 'registry.ollama.ai/library/llama3.2:latest'],
    ['', undefined],
    ['m:', undefined],
    ['a//b', undefined],
    ['a/b/c/d', undefined],
  ];
  for (const [name, expected] of table) assert.equal(ollamaFullName(name), expected, name);
});

const LISTED = listing(
  id('llama3.2:latest'),
  id('qwen3:8b'),
  id('user/model:latest'),
  id('tiny-llama-a', ['gpt-4o-mini', 'tiny-a']),
  id('exact'),
);

/** Per kind, what each requested name resolves to (undefined = the node would refuse it). */
const EXPECTED: Readonly<Record<NodeKind, Readonly<Record<string, string | undefined>>>> = {
  vllm: { exact: 'exact', 'llama3.2': undefined, 'gpt-4o-mini': undefined, 'llama3.2:latest': 'llama3.2:latest' },
  sglang: { exact: 'exact', 'llama3.2': undefined, 'gpt-4o-mini': undefined },
  openai: { exact: 'exact', 'llama3.2': undefined, 'gpt-4o-mini': undefined },
  llamacpp: {
    exact: 'exact',
    'gpt-4o-mini': 'tiny-llama-a',
    'tiny-a': 'tiny-llama-a',
    'llama3.2': undefined,
    'GPT-4o-mini': undefined,
  },
  ollama: {
    exact: 'exact',
    'llama3.2': 'llama3.2:latest',
    'library/llama3.2': 'llama3.2:latest',
    'user/model': 'user/model:latest',
    qwen3: undefined,
    'gpt-4o-mini': undefined,
    'llama3.2:1b': undefined,
  },
  auto: { exact: 'exact', 'llama3.2': 'llama3.2:latest', 'gpt-4o-mini': 'tiny-llama-a', 'no-such': undefined },
};

test('every kind resolves names as its server does; an unlisted name resolves to nothing', () => {
  for (const kind of serverKinds()) {
    for (const [name, expected] of Object.entries(EXPECTED[kind.name])) {
      assert.equal(kind.resolveModelName(name, LISTED), expected, `${kind.name}: ${name}`);
    }
    assert.equal(kind.resolveModelName('no-such-model', LISTED), undefined, kind.name);
    assert.equal(kind.resolveModelName('anything', new Map()), undefined, kind.name);
  }
});

test('a llama-server alias two listed models claim is ambiguous and resolves to none', () => {
  const twice = listing(id('a', ['shared']), id('b', ['shared']));
  assert.equal(serverKind('llamacpp').resolveModelName('shared', twice), undefined);
  assert.equal(serverKind('llamacpp').resolveModelName('a', twice), 'a');
});
