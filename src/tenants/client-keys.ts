// A tenant's client keys: each entry a literal key, "env:VAR" (one key from the environment) or
// "file:PATH" (one key per line; blank lines and lines starting with # are skipped). A key file is
// read again on every reload, so keys rotate on SIGHUP: write the new key next to the old one,
// reload, move the clients, remove the old one, reload. Messages name the variable or the file,
// never a key.
import { resolveApiKey, type EnvVars } from '#src/config/api-key.ts';
import type { SecretFileReader } from '#src/config/config-table.ts';
import { invalid, valid, type ParseResult } from '#src/config/parse-result.ts';

const FILE_PREFIX = 'file:';
/** Longest key accepted: a key is a bearer token, not a document. */
const MAX_KEY_CHARS = 1024;

export function resolveClientKeys(value: string, env: EnvVars, readFile: SecretFileReader): ParseResult<readonly string[]> {
  if (!value.startsWith(FILE_PREFIX)) {
    const key = resolveApiKey(value, env);
    if (!key.ok) return key;
    return checkKey(key.value, 'the key');
  }
  const path = value.slice(FILE_PREFIX.length);
  if (path === '') return invalid('"file:" must be followed by the path of a file with one key per line');
  const text = readFile(path);
  if (!text.ok) return invalid(`cannot read key file ${path}: ${text.message}`);
  const keys: string[] = [];
  for (const [index, line] of text.value.split(/\r?\n/).entries()) {
    const key = line.trim();
    if (key === '' || key.startsWith('#')) continue;
    const checked = checkKey(key, `line ${index + 1} of ${path}`);
    if (!checked.ok) return checked;
    keys.push(key);
  }
  if (keys.length === 0) return invalid(`key file ${path} holds no key (one per line; # starts a comment)`);
  return valid(keys);
}

function checkKey(key: string, where: string): ParseResult<readonly string[]> {
  if (key.length > MAX_KEY_CHARS) return invalid(`${where} is longer than ${MAX_KEY_CHARS} characters`);
  if (/\s/.test(key)) return invalid(`${where} holds whitespace; a key is one token`);
  return valid([key]);
}
