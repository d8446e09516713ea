// A node's API key: a literal, or "env:VAR" read from the environment given to the loader, so
// secrets can stay out of the file. Messages name the variable, never the key.
import { invalid, valid, type ParseResult } from './parse-result.ts';

export type EnvVars = Readonly<Record<string, string | undefined>>;

const ENV_PREFIX = 'env:';
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function resolveApiKey(value: string, env: EnvVars): ParseResult<string> {
  if (!value.startsWith(ENV_PREFIX)) {
    return value === '' ? invalid('must not be empty; leave api_key out for a node without a key') : valid(value);
  }
  const name = value.slice(ENV_PREFIX.length);
  if (!VARIABLE_NAME.test(name)) return invalid('"env:" must be followed by an environment variable name, like "env:GPU_KEY"');
  const resolved = env[name];
  if (resolved === undefined) return invalid(`environment variable ${name} is not set`);
  if (resolved === '') return invalid(`environment variable ${name} is empty`);
  return valid(resolved);
}
