// Reading the document as written (before the schema), for the checks that compare entries or
// tables (config/cross-checks.ts and each feature table's `crossChecks`): each field is read only
// through the schema's own rule for it, and what did not parse reads as nothing, so a check judges
// only as far as what parsed lets it.

import type { z } from 'zod';
import type { NameClash } from './name-clashes.ts';

/** A TOML table as parsed, before the schema. */
export type RawTable = Readonly<Record<string, unknown>>;

export function tableOf(value: unknown): RawTable | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date)
    ? (value as RawTable)
    : undefined;
}

/** The entries of a list of tables; what is not a table stands as an empty one (its fields parse as nothing). */
export function entriesOf(value: unknown): RawTable[];
export function entriesOf<T>(value: unknown, each: (item: unknown) => T): T[];
export function entriesOf<T>(value: unknown, each?: (item: unknown) => T): (T | RawTable)[] {
  if (!Array.isArray(value)) return [];
  return value.map((item) => (each === undefined ? (tableOf(item) ?? {}) : each(item)));
}

/** Whether a list is absent or a list (of anything: its items are judged one by one). */
export function wellFormedList(value: unknown): boolean {
  return value === undefined || Array.isArray(value);
}

/** Whether an optional list is absent, or a list whose every item passes `schema`. */
export function wellFormed(value: unknown, schema: z.ZodType): boolean {
  return value === undefined || (Array.isArray(value) && value.every((item) => schema.safeParse(item).success));
}

export function parsed<T>(schema: z.ZodType<T>, value: unknown): T | undefined {
  const result = schema.safeParse(value);
  return result.success ? result.data : undefined;
}

export function fieldOf<T>(table: RawTable, key: string, schema: z.ZodType<T>): T | undefined {
  return parsed(schema, table[key]);
}

/** Findings of a list or table, with its path in front. */
export function under(prefix: readonly (string | number)[], clashes: readonly NameClash[]): NameClash[] {
  return clashes.map((clash) => ({ path: [...prefix, ...clash.path], message: clash.message }));
}
