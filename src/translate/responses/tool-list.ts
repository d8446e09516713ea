// Responses tools and tool_choice → chat `tools` and `tool_choice`. A chat node runs nothing itself,
// so it is offered what the client runs: `function` tools as they are; `custom` tools (free-form
// text, e.g. an apply_patch grammar) as a function of one string argument `input`, the grammar told
// in the description; the functions of a `namespace` tool as `<namespace>__<name>`. Tools OpenAI's
// servers run (web search, file search, code interpreter, image generation, computer use, remote
// MCP) are dropped: no chat node can run them, and Codex offers web_search on every turn. A
// tool_choice that forces one of those, or a tool type nothing here knows, is refused by name.

import { isRecord } from '#src/core/is-record.ts';
import type { JsonObject, Untranslatable } from '#src/translate/translation.ts';
import { CUSTOM_INPUT, type ClientTool } from '#src/translate/responses/memo.ts';
import { untranslatable } from '#src/translate/untranslatable.ts';

/** Tools the OpenAI server runs for the model: dropped (a Chat Completions node runs no tools). */
const HOSTED_TOOL =
  /^(web_search|web_search_preview|file_search|code_interpreter|image_generation|computer_use_preview|computer|mcp|tool_search)(_\d{4}_\d{2}_\d{2})?$/;

/** Separator of a namespaced function's chat name (`multi_agent_v1__spawn_agent`): allowed in every server's function names. */
export const NAMESPACE_SEPARATOR = '__';

export interface ChatTools {
  /** Chat `tools` (empty: send none). */
  readonly tools: readonly JsonObject[];
  /** Chat function name → the client's tool. */
  readonly names: Readonly<Record<string, ClientTool>>;
}

function nameOf(tool: Readonly<Record<string, unknown>>): string | undefined {
  const name = tool['name'];
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** A `custom` tool's description, with its input grammar (lost as a constraint: the node cannot enforce it). */
function customDescription(tool: Readonly<Record<string, unknown>>): string {
  const description = typeof tool['description'] === 'string' ? tool['description'] : '';
  const format = tool['format'];
  if (!isRecord(format) || format['type'] !== 'grammar' || typeof format['definition'] !== 'string') return description;
  const syntax = typeof format['syntax'] === 'string' ? format['syntax'] : 'grammar';
  return `${description}\n\nThe input must follow this ${syntax} grammar:\n${format['definition']}`.trim();
}

function chatFunction(tool: Readonly<Record<string, unknown>>, chatName: string): JsonObject {
  const fn: JsonObject = { name: chatName };
  if (tool['type'] === 'custom') {
    fn['description'] = customDescription(tool);
    fn['parameters'] = {
      type: 'object',
      properties: { [CUSTOM_INPUT]: { type: 'string', description: 'The tool input, as free-form text.' } },
      required: [CUSTOM_INPUT],
      additionalProperties: false,
    };
    return { type: 'function', function: fn };
  }
  if (typeof tool['description'] === 'string') fn['description'] = tool['description'];
  if (isRecord(tool['parameters'])) fn['parameters'] = tool['parameters'];
  if (typeof tool['strict'] === 'boolean') fn['strict'] = tool['strict'];
  return { type: 'function', function: fn };
}

/** `tools` → chat tools and the name map, or the tool that cannot be carried. */
export function chatTools(tools: unknown): ChatTools | Untranslatable {
  if (tools === undefined || tools === null) return { tools: [], names: {} };
  if (!Array.isArray(tools)) return untranslatable('tools', 'tools must be a list');
  const out: JsonObject[] = [];
  const names: Record<string, ClientTool> = {};
  const add = (tool: Readonly<Record<string, unknown>>, field: string, namespace?: string): Untranslatable | undefined => {
    const name = nameOf(tool);
    if (name === undefined) return untranslatable(`${field}.name`, 'a function or custom tool needs a name');
    const chatName = namespace === undefined ? name : `${namespace}${NAMESPACE_SEPARATOR}${name}`;
    if (Object.hasOwn(names, chatName)) return untranslatable(`${field}.name`, `two tools are named '${chatName}'`);
    const kind = tool['type'] === 'custom' ? 'custom' : 'function';
    names[chatName] = namespace === undefined ? { kind, name } : { kind, name, namespace };
    out.push(chatFunction(tool, chatName));
    return undefined;
  };
  for (const [index, tool] of tools.entries()) {
    const field = `tools[${index}]`;
    if (!isRecord(tool)) return untranslatable(field, 'a tool must be an object');
    const type = tool['type'];
    if (type === 'function' || type === 'custom') {
      const refused = add(tool, field);
      if (refused !== undefined) return refused;
    } else if (type === 'namespace') {
      const namespace = nameOf(tool);
      if (namespace === undefined) return untranslatable(`${field}.name`, 'a namespace tool needs a name');
      const inner = Array.isArray(tool['tools']) ? tool['tools'] : [];
      for (const [innerIndex, member] of inner.entries()) {
        const at = `${field}.tools[${innerIndex}]`;
        if (!isRecord(member) || (member['type'] !== 'function' && member['type'] !== 'custom'))
          return untranslatable(`${at}.type`, 'a namespace holds function and custom tools only');
        const refused = add(member, at, namespace);
        if (refused !== undefined) return refused;
      }
    } else if (typeof type !== 'string' || !HOSTED_TOOL.test(type)) {
      return untranslatable(
        `${field}.type`,
        `a tool of type '${String(type)}' has no Chat Completions equivalent: offer it as a function tool`,
      );
    }
  }
  return { tools: out, names };
}

/** The chat name standing for the client's tool `name` (a namespaced or custom tool included). */
function chatNameFor(names: Readonly<Record<string, ClientTool>>, name: string): string {
  if (Object.hasOwn(names, name)) return name;
  return Object.keys(names).find((chatName) => names[chatName]?.name === name) ?? name;
}

export interface ChatChoice {
  /** Chat `tool_choice` (undefined: send none). */
  readonly toolChoice: unknown;
  /** The chat tools left after an `allowed_tools` choice. */
  readonly tools: readonly JsonObject[];
}

/** `tool_choice` → chat's, over the translated tools; a choice that forces a tool the node cannot run is refused. */
export function chatToolChoice(choice: unknown, offered: ChatTools): ChatChoice | Untranslatable {
  if (choice === undefined || choice === null) return { toolChoice: undefined, tools: offered.tools };
  if (choice === 'auto' || choice === 'none' || choice === 'required') return { toolChoice: choice, tools: offered.tools };
  if (!isRecord(choice)) return untranslatable('tool_choice', "tool_choice must be 'auto', 'none', 'required' or an object");
  const type = choice['type'];
  if (type === 'function' || type === 'custom') {
    const name = nameOf(choice);
    if (name === undefined) return untranslatable('tool_choice.name', 'a forced tool needs a name');
    return { toolChoice: { type: 'function', function: { name: chatNameFor(offered.names, name) } }, tools: offered.tools };
  }
  if (type === 'allowed_tools') {
    const mode = choice['mode'];
    if (mode !== 'auto' && mode !== 'required')
      return untranslatable('tool_choice.mode', "allowed_tools mode must be 'auto' or 'required'");
    const listed = Array.isArray(choice['tools']) ? choice['tools'].filter(isRecord) : [];
    const allowed = new Set(
      listed.flatMap((tool) => (nameOf(tool) === undefined ? [] : [chatNameFor(offered.names, String(tool['name']))])),
    );
    const tools = offered.tools.filter((tool) => {
      const fn = tool['function'];
      return isRecord(fn) && allowed.has(String(fn['name']));
    });
    return { toolChoice: mode, tools };
  }
  return untranslatable(
    'tool_choice.type',
    `tool_choice forces a '${String(type)}' tool, which a Chat Completions node cannot run`,
  );
}
