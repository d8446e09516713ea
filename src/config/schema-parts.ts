// The building blocks of the config schema: strict tables, parsed durations and sizes, names, and
// the number rules the sections share.
import { z } from 'zod';
import { parseDurationMs } from './duration.ts';
import type { ParseResult } from './parse-result.ts';
import { parseSizeBytes } from './size.ts';

/** A strict TOML table whose unknown-key problem lists the keys it does accept. */
export function table<const Shape extends z.ZodRawShape>(shape: Shape) {
  const expected = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code === 'unrecognized_keys') return `unknown key; expected one of: ${expected}`;
      if (issue.code === 'invalid_type') return 'must be a table';
      return undefined;
    },
  });
}

/** Runs a ParseResult-returning parser as a zod step, turning its message into an issue. */
export function parsedBy<I, T>(parse: (input: I) => ParseResult<T>) {
  return z.transform<I, T>((input, ctx) => {
    const result = parse(input);
    if (result.ok) return result.value;
    ctx.issues.push({ code: 'custom', message: result.message, input });
    return z.NEVER;
  });
}

export const durationMs = z.unknown().pipe(parsedBy(parseDurationMs));
export const positiveDurationMs = durationMs.pipe(z.number().positive({ error: 'must be longer than 0s' }));
export const positiveSizeBytes = z
  .unknown()
  .pipe(parsedBy(parseSizeBytes))
  .pipe(z.number().positive({ error: 'must be more than 0 bytes' }));

export const name = z
  .string()
  .min(1, { error: 'must not be empty' })
  .refine((text) => text.trim() === text, { error: 'must not start or end with whitespace' });

/**
 * Node names travel in the `x-switchyard-node` response header, metrics labels and logs: a
 * character outside this set (a newline, `α`) would make every answer through the node fail.
 */
export const NODE_NAME_RULE = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$/;
export const nodeName = name.refine((text) => text === '' || text.trim() !== text || NODE_NAME_RULE.test(text), {
  error: 'must be 1 to 64 characters: letters A-Z a-z, digits, and . _ : @ - (not first)',
});

export const nonNegativeDurationMs = durationMs.pipe(z.number().min(0, { error: 'must not be negative' }));
export const wholeAtLeastOne = z
  .int({ error: 'must be a whole number of at least 1' })
  .min(1, { error: 'must be a whole number of at least 1' });

/** A number > 0 and at most `max`. */
export const positiveUpTo = (max: number) =>
  z
    .number({ error: 'must be a number greater than 0' })
    .positive({ error: 'must be a number greater than 0' })
    .max(max, { error: `must be at most ${max}` });
/** A number from `min` to `max` (no upper bound stated when `max` is Number.MAX_VALUE). */
export const numberIn = (min: number, max: number) => {
  const error = max === Number.MAX_VALUE ? `must be a number of at least ${min}` : `must be a number from ${min} to ${max}`;
  return z.number({ error }).min(min, { error }).max(max, { error });
};
