// A request a translation cannot carry to the node: the field (a key path) and why. The request
// feature answers it 400 in the client's API, naming the field (translation.ts, Untranslatable).

import type { Untranslatable } from './translation.ts';

export function untranslatable(field: string, message: string): Untranslatable {
  return { kind: 'untranslatable', field, message: `${field}: ${message}` };
}

/** Whether a converter's result is a refusal (a converter returns its value or an Untranslatable). */
export function isUntranslatable(value: unknown): value is Untranslatable {
  return typeof value === 'object' && value !== null && 'kind' in value && value.kind === 'untranslatable';
}

/** Thrown inside a converter where a nested field cannot be carried; caught once at the translation's edge. */
export class CannotCarry extends Error {
  readonly field: string;
  readonly reason: string;

  constructor(field: string, reason: string) {
    super(`${field}: ${reason}`);
    this.field = field;
    this.reason = reason;
  }
}
