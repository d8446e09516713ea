// The one test for "a JSON object" (not null, not an array), used wherever untrusted JSON is read.

export function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
