// The only producer of GatewayConfig: TOML text + environment → a frozen, fully defaulted config,
// or every problem found, each with its key path: the schema's (each value) and cross-checks.ts's
// (entries against each other), both in one run. Pure apart from loadConfigFile's single read.
// The features' tables (config-table.ts) are given to it: `configLoader(tables)` is the loader of
// a file with those tables (src/config-tables.ts binds the gateway's list).
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parse, TomlError } from 'smol-toml';
import type { EnvVars } from './api-key.ts';
import type { AnyConfigTable, SecretFileReader } from './config-table.ts';
import { invalid, valid } from './parse-result.ts';
import { configIssueMessage, problemsFromIssues } from './config-issues.ts';
import { crossCheckProblems } from './cross-checks.ts';
import { deepFreeze } from './deep-freeze.ts';
import { gatewayConfigSchema } from './schema.ts';
import type { ConfigProblem, LoadResult } from './types.ts';

/** Reads a secret file (`file:` keys); the loader's one read besides the config file (bounded: keys are small). */
export const readKeyFile: SecretFileReader = (path) => {
  try {
    const text = readFileSync(path, 'utf8');
    return text.length > MAX_KEY_FILE_CHARS ? invalid(`larger than ${MAX_KEY_FILE_CHARS} characters`) : valid(text);
  } catch (error) {
    return invalid(error instanceof Error && 'code' in error ? String(error.code) : String(error));
  }
};
const MAX_KEY_FILE_CHARS = 4 * 1024 * 1024;

/** Loads a config's text: `source` names the text in a syntax error (the file's path), so the operator knows where to look. */
export type LoadConfig = (tomlText: string, env: EnvVars, source?: string, readFile?: SecretFileReader) => LoadResult;
/** Reads and loads one file; an unreadable file is a problem like any other, not an exception. */
export type LoadConfigFile = (path: string, env: EnvVars) => Promise<LoadResult>;

/** The loader of a config file whose optional tables are `tables` (each feature's, config-table.ts). */
export function configLoader(tables: readonly AnyConfigTable[]): {
  readonly loadConfig: LoadConfig;
  readonly loadConfigFile: LoadConfigFile;
} {
  const names = tables.map((table) => table.name);
  const twice = names.filter((name, i) => names.indexOf(name) !== i);
  // A list that names a table twice is a broken feature list, said where it is built.
  if (twice.length > 0) throw new Error(`the config tables list "${twice.join('", "')}" twice (src/config-tables.ts)`);
  const loadConfig: LoadConfig = (tomlText, env, source, readFile = readKeyFile) => {
    let document: unknown;
    try {
      document = parse(tomlText);
    } catch (error) {
      const where = source === undefined ? '' : `${source}: `;
      return failed([{ path: '', message: `${where}${describeSyntaxError(error)}` }]);
    }
    // Both passes always run: every problem in one go, the values' and the entries' against each other.
    const secrets = { env, readFile };
    const parsed = gatewayConfigSchema(secrets, tables).safeParse(document, { error: configIssueMessage });
    const problems = [
      ...(parsed.success ? [] : problemsFromIssues(parsed.error.issues)),
      ...crossCheckProblems(document, secrets, tables),
    ];
    if (!parsed.success || problems.length > 0) return failed(problems);
    return Object.freeze({ ok: true, config: deepFreeze(parsed.data) });
  };
  const loadConfigFile: LoadConfigFile = async (path, env) => {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return failed([{ path: '', message: `cannot read config file: ${reason}` }]);
    }
    return loadConfig(text, env, path);
  };
  return { loadConfig, loadConfigFile };
}

/** One `path: message` line per problem; a whole-file problem has no path prefix. */
export function formatProblems(problems: readonly ConfigProblem[]): string {
  return problems.map((problem) => (problem.path === '' ? problem.message : `${problem.path}: ${problem.message}`)).join('\n');
}

function failed(problems: readonly ConfigProblem[]): LoadResult {
  return Object.freeze({ ok: false, problems: deepFreeze(problems) });
}

function describeSyntaxError(error: unknown): string {
  if (!(error instanceof TomlError)) return `invalid TOML: ${String(error)}`;
  // smol-toml appends a multi-line code excerpt; the first line plus the position fits one problem line.
  const headline = error.message.split('\n')[0] ?? 'invalid TOML';
  return `${headline} (line ${error.line}, column ${error.column})`;
}
