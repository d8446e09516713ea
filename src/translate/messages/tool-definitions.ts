// Anthropic's tool definitions and tool_choice → OpenAI's function tools and tool_choice. A client
// tool (no `type`, or `custom`) becomes a function whose parameters are its input_schema; Anthropic's
// own tool types (web search, code execution, the versioned bash/editor/computer tools) run on
// Anthropic's side or need its schema, and cannot be carried.

import { isRecord } from '#src/core/is-record.ts';
import { CannotCarry } from '../untranslatable.ts';

export function functionTools(tools: unknown): Record<string, unknown>[] | undefined {
  if (tools === undefined || tools === null) return undefined;
  if (!Array.isArray(tools)) throw new CannotCarry('tools', 'must be an array');
  return tools.map((tool: unknown, i) => {
    const field = `tools[${i}]`;
    if (!isRecord(tool)) throw new CannotCarry(field, 'must be an object');
    if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom')
      throw new CannotCarry(
        `${field}.type`,
        `Anthropic's own tool ${JSON.stringify(tool.type)} cannot be run by a Chat Completions node (client tools can)`,
      );
    if (typeof tool.name !== 'string' || tool.name === '') throw new CannotCarry(`${field}.name`, 'must be a non-empty string');
    const schema = tool.input_schema ?? { type: 'object', properties: {} };
    if (!isRecord(schema)) throw new CannotCarry(`${field}.input_schema`, 'must be a JSON schema object');
    const fn: Record<string, unknown> = { name: tool.name, parameters: schema };
    if (typeof tool.description === 'string') fn.description = tool.description;
    return { type: 'function', function: fn };
  });
}

/** `tool_choice` → OpenAI's `tool_choice` and `parallel_tool_calls` (from `disable_parallel_tool_use`). */
export function toolChoice(choice: unknown): { tool_choice?: unknown; parallel_tool_calls?: boolean } {
  if (choice === undefined || choice === null) return {};
  if (!isRecord(choice)) throw new CannotCarry('tool_choice', 'must be an object');
  const out: { tool_choice?: unknown; parallel_tool_calls?: boolean } = {};
  switch (choice.type) {
    case 'auto':
      out.tool_choice = 'auto';
      break;
    case 'any':
      out.tool_choice = 'required';
      break;
    case 'none':
      out.tool_choice = 'none';
      break;
    case 'tool':
      if (typeof choice.name !== 'string') throw new CannotCarry('tool_choice.name', 'must name the tool');
      out.tool_choice = { type: 'function', function: { name: choice.name } };
      break;
    default:
      throw new CannotCarry('tool_choice.type', 'must be auto, any, tool or none');
  }
  if (choice.disable_parallel_tool_use === true) out.parallel_tool_calls = false;
  return out;
}
