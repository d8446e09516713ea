// Turns zod's issues into ConfigProblems: operator-facing wording for the generic issue kinds, and
// one problem per unknown key. Messages describe the kind of a wrong value, never the value itself,
// so a secret pasted into the wrong key is not echoed to a terminal or log.
import type { z } from 'zod';
import { formatKeyPath } from './key-path.ts';
import type { ConfigProblem } from './types.ts';

const EXPECTED_WORDING: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'an array',
  object: 'a table',
};

/** Per-parse error map: used only where a schema did not set its own message. */
export function configIssueMessage(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code !== 'invalid_type') return undefined;
  if (issue.input === undefined) return 'is required';
  return `must be ${EXPECTED_WORDING[issue.expected] ?? issue.expected}, not ${describeTomlKind(issue.input)}`;
}

function describeTomlKind(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return 'a date';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a float';
  if (typeof value === 'object' && value !== null) return 'a table';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'boolean') return 'a boolean';
  return typeof value;
}

export function problemsFromIssues(issues: readonly z.core.$ZodIssue[]): ConfigProblem[] {
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: formatKeyPath([...issue.path, key]), message: issue.message }))
      : [{ path: formatKeyPath(issue.path), message: issue.message }],
  );
}
