// Anthropic's `system` (a string, or text blocks whose cache_control is dropped) → the one system
// message a Chat Completions node reads first.

import { isRecord } from '#src/core/is-record.ts';
import { CannotCarry } from '../untranslatable.ts';

/** The system message, or undefined when there is none. Blocks are joined by a blank line. */
export function systemMessage(system: unknown): Record<string, unknown> | undefined {
  if (system === undefined || system === null) return undefined;
  if (typeof system === 'string') return system === '' ? undefined : { role: 'system', content: system };
  if (!Array.isArray(system)) throw new CannotCarry('system', 'must be a string or an array of text blocks');
  const texts = system.map((block: unknown, i) => {
    if (!isRecord(block) || block.type !== 'text' || typeof block.text !== 'string')
      throw new CannotCarry(`system[${i}]`, 'only text blocks can be carried in the system prompt');
    return block.text;
  });
  return texts.length === 0 ? undefined : { role: 'system', content: texts.join('\n\n') };
}
