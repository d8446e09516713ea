// A Responses request field a Chat Completions node cannot carry: the client gets 400 naming it.

import type { Untranslatable } from '#src/translate/translation.ts';

export function untranslatable(field: string, message: string): Untranslatable {
  return { kind: 'untranslatable', field, message };
}

export function isUntranslatable(value: unknown): value is Untranslatable {
  return typeof value === 'object' && value !== null && 'kind' in value && value.kind === 'untranslatable';
}
