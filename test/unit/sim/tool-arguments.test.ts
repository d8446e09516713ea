// A tool call's arguments satisfy the tool's schema: every required property, of its type, from
// the schema's own values first.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toolArguments } from '#src/sim/tool-arguments.ts';

test('required properties only, each of its type; optional ones are left out', () => {
  const schema = {
    type: 'object',
    properties: {
      name: { type: 'string' },
      count: { type: 'integer', minimum: 3 },
      ratio: { type: 'number', maximum: 0.5 },
      on: { type: 'boolean' },
      tags: { type: 'array', items: { type: 'string' }, minItems: 2 },
      nested: { type: 'object', properties: { id: { type: 'integer' }, extra: { type: 'string' } }, required: ['id'] },
      maybe: { type: ['null', 'string'] },
      optional: { type: 'string' },
    },
    required: ['name', 'count', 'ratio', 'on', 'tags', 'nested', 'maybe'],
  };
  assert.deepEqual(toolArguments(schema, 'hi'), {
    name: 'sim',
    count: 3,
    ratio: 0.5,
    on: false,
    tags: ['sim', 'sim'],
    nested: { id: 1 },
    maybe: 'sim',
  });
});

test("the schema's const, enum, default and examples come first", () => {
  const schema = {
    type: 'object',
    properties: {
      a: { const: 'fixed' },
      b: { type: 'string', enum: ['low', 'high'] },
      c: { type: 'integer', default: 7 },
      d: { type: 'string', examples: ['example'] },
      e: { type: 'integer', default: 'wrong type' },
    },
    required: ['a', 'b', 'c', 'd', 'e'],
  };
  assert.deepEqual(toolArguments(schema, ''), { a: 'fixed', b: 'low', c: 7, d: 'example', e: 1 });
});

test("an agent's tools get meaningful strings: a command runs ls, a path is '.', a query repeats the user", () => {
  const strings = (names: string[]) => ({
    type: 'object',
    properties: Object.fromEntries(names.map((n) => [n, { type: 'string' }])),
    required: names,
  });
  assert.deepEqual(toolArguments(strings(['command', 'path', 'file_path', 'pattern', 'query', 'url']), 'list the files'), {
    command: 'ls',
    path: '.',
    file_path: 'README.md',
    pattern: '*',
    query: 'list the files',
    url: 'https://example.com/',
  });
  // Codex's shell tool: the command is an argv array.
  const argv = { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } } }, required: ['command'] };
  assert.deepEqual(toolArguments(argv, ''), { command: ['ls'] });
});

test('$ref, anyOf and oneOf are followed; a self-referencing schema stays bounded', () => {
  const schema = {
    type: 'object',
    $defs: { point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] } },
    properties: {
      p: { $ref: '#/$defs/point' },
      q: { anyOf: [{ type: 'null' }, { type: 'integer' }] },
      r: { oneOf: [{ type: 'boolean' }, { type: 'string' }] },
      loop: { $ref: '#' },
      missing: { $ref: '#/$defs/nope' },
    },
    required: ['p', 'q', 'r', 'missing'],
  };
  assert.deepEqual(toolArguments(schema, ''), { p: { x: 1 }, q: 1, r: false, missing: null });
  const selfish = {
    type: 'object',
    $defs: { n: { type: 'object', properties: { next: { $ref: '#/$defs/n' } }, required: ['next'] } },
    properties: { head: { $ref: '#/$defs/n' } },
    required: ['head'],
  };
  assert.doesNotThrow(() => JSON.stringify(toolArguments(selfish, '')));
  assert.deepEqual(toolArguments({}, 'x'), {});
});
