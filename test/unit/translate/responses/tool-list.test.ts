// Responses tools and tool_choice → chat's: what the client runs is offered as chat functions
// (function, custom, namespaced), what OpenAI's servers run is dropped, the rest refused by name.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chatToolChoice, chatTools, type ChatTools } from '#src/translate/responses/tool-list.ts';

const SCHEMA = { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] };
const EXEC = { type: 'function', name: 'exec_command', description: 'Runs a command.', strict: false, parameters: SCHEMA };

function translated(tools: unknown): ChatTools {
  const result = chatTools(tools);
  assert.ok(!('kind' in result), `translated: ${JSON.stringify(result)}`);
  return result;
}

test('a function tool is a chat function with its description, parameters and strict flag', () => {
  assert.deepEqual(translated([EXEC]), {
    tools: [
      { type: 'function', function: { name: 'exec_command', description: 'Runs a command.', parameters: SCHEMA, strict: false } },
    ],
    names: { exec_command: { kind: 'function', name: 'exec_command' } },
  });
});

test("a namespace's functions are chat functions named <namespace>__<name>, remembered as namespaced", () => {
  const result = translated([
    {
      type: 'namespace',
      name: 'multi_agent_v1',
      description: 'Sub-agents.',
      tools: [{ type: 'function', name: 'spawn_agent', description: 'Spawn one.', parameters: SCHEMA }],
    },
  ]);
  assert.deepEqual(result.tools, [
    { type: 'function', function: { name: 'multi_agent_v1__spawn_agent', description: 'Spawn one.', parameters: SCHEMA } },
  ]);
  assert.deepEqual(result.names, {
    multi_agent_v1__spawn_agent: { kind: 'function', name: 'spawn_agent', namespace: 'multi_agent_v1' },
  });
});

test('a custom tool is a function of one string argument `input`, its grammar told in the description', () => {
  const result = translated([
    {
      type: 'custom',
      name: 'apply_patch',
      description: 'Edit files.',
      format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch"' },
    },
  ]);
  assert.deepEqual(result.tools, [
    {
      type: 'function',
      function: {
        name: 'apply_patch',
        description: 'Edit files.\n\nThe input must follow this lark grammar:\nstart: "*** Begin Patch"',
        parameters: {
          type: 'object',
          properties: { input: { type: 'string', description: 'The tool input, as free-form text.' } },
          required: ['input'],
          additionalProperties: false,
        },
      },
    },
  ]);
  assert.deepEqual(result.names, { apply_patch: { kind: 'custom', name: 'apply_patch' } });
});

test("the tools OpenAI's servers run (Codex's web_search among them) are dropped", () => {
  const hosted = [
    { type: 'web_search', external_web_access: false },
    { type: 'web_search_preview_2025_03_11' },
    { type: 'file_search', vector_store_ids: ['vs'] },
    { type: 'code_interpreter', container: { type: 'auto' } },
    { type: 'image_generation' },
    { type: 'mcp', server_label: 's', server_url: 'https://x' },
  ];
  assert.deepEqual(translated([...hosted, EXEC]).tools.length, 1);
  assert.deepEqual(translated(hosted), { tools: [], names: {} });
});

const REFUSED: readonly { name: string; tools: unknown; field: string }[] = [
  { name: 'a local_shell tool (no chat equivalent)', tools: [{ type: 'local_shell' }], field: 'tools[0].type' },
  { name: 'a tool without a type', tools: [EXEC, { name: 'x' }], field: 'tools[1].type' },
  { name: 'a function without a name', tools: [{ type: 'function', parameters: SCHEMA }], field: 'tools[0].name' },
  { name: 'two tools of one chat name', tools: [EXEC, EXEC], field: 'tools[1].name' },
  {
    name: 'a namespace holding another namespace',
    tools: [{ type: 'namespace', name: 'n', tools: [{ type: 'namespace', name: 'm', tools: [] }] }],
    field: 'tools[0].tools[0].type',
  },
  { name: 'tools that are not a list', tools: { EXEC }, field: 'tools' },
];

for (const { name, tools, field } of REFUSED) {
  test(`refuses ${name}, naming ${field}`, () => {
    const result = chatTools(tools);
    assert.ok('kind' in result && result.kind === 'untranslatable', 'refused');
    assert.equal(result.field, field);
  });
}

const OFFERED = translated([
  EXEC,
  { type: 'custom', name: 'apply_patch', description: 'Edit.' },
  { type: 'namespace', name: 'ns', description: '', tools: [{ type: 'function', name: 'spawn', parameters: SCHEMA }] },
]);

const CHOICES: readonly { name: string; choice: unknown; toolChoice: unknown; names: string[] }[] = [
  {
    name: 'none given: none sent',
    choice: undefined,
    toolChoice: undefined,
    names: ['exec_command', 'apply_patch', 'ns__spawn'],
  },
  {
    name: 'auto, none and required pass as they are',
    choice: 'required',
    toolChoice: 'required',
    names: ['exec_command', 'apply_patch', 'ns__spawn'],
  },
  {
    name: 'a forced function names the chat function',
    choice: { type: 'function', name: 'exec_command' },
    toolChoice: { type: 'function', function: { name: 'exec_command' } },
    names: ['exec_command', 'apply_patch', 'ns__spawn'],
  },
  {
    name: 'a forced custom tool names its chat function',
    choice: { type: 'custom', name: 'apply_patch' },
    toolChoice: { type: 'function', function: { name: 'apply_patch' } },
    names: ['exec_command', 'apply_patch', 'ns__spawn'],
  },
  {
    name: 'a forced namespaced function names its <namespace>__<name>',
    choice: { type: 'function', name: 'spawn' },
    toolChoice: { type: 'function', function: { name: 'ns__spawn' } },
    names: ['exec_command', 'apply_patch', 'ns__spawn'],
  },
  {
    name: 'allowed_tools keeps only the tools it lists, with its mode',
    choice: {
      type: 'allowed_tools',
      mode: 'required',
      tools: [
        { type: 'function', name: 'exec_command' },
        { type: 'function', name: 'spawn' },
      ],
    },
    toolChoice: 'required',
    names: ['exec_command', 'ns__spawn'],
  },
];

for (const { name, choice, toolChoice, names } of CHOICES) {
  test(`tool_choice: ${name}`, () => {
    const result = chatToolChoice(choice, OFFERED);
    assert.ok(!('kind' in result), 'translated');
    assert.deepEqual(result.toolChoice, toolChoice);
    assert.deepEqual(
      result.tools.map((tool) => (tool['function'] as { name: string }).name),
      names,
    );
  });
}

test('tool_choice forcing a tool the node cannot run (web_search) is refused, naming tool_choice.type', () => {
  const result = chatToolChoice({ type: 'web_search_preview' }, OFFERED);
  assert.ok('kind' in result && result.kind === 'untranslatable');
  assert.equal(result.field, 'tool_choice.type');
});
