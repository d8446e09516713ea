// A node's base URL, normalised so that equal servers compare equal across reloads
// (config/diff.ts keeps a node's learned state only when its URL is unchanged).
import { invalid, valid, type ParseResult } from './parse-result.ts';

const EXPECTED = 'must be an http(s) URL';

/** "http://10.0.0.5:8080/" → "http://10.0.0.5:8080"; the rest of the gateway appends "/v1/…" itself. */
export function normalizeNodeUrl(text: string): ParseResult<string> {
  if (!URL.canParse(text)) return invalid(`${EXPECTED}, like "http://10.0.0.5:8000"`);
  const url = new URL(text);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return invalid(`${EXPECTED}, not ${url.protocol}`);
  // Credentials in the URL would end up in logs and the admin API, which both show URLs.
  if (url.username !== '' || url.password !== '') return invalid(`${EXPECTED} without credentials; use api_key`);
  if (url.search !== '' || text.includes('?')) return invalid(`${EXPECTED} without a query string`);
  if (url.hash !== '' || text.includes('#')) return invalid(`${EXPECTED} without a fragment`);
  const path = url.pathname.replace(/\/+$/, '');
  if (/\/v1$/i.test(path)) {
    return invalid(`${EXPECTED} of the server root, without "/v1" (the gateway adds /v1/... itself)`);
  }
  return valid(`${url.origin}${path}`);
}

/**
 * The path prefix of a normalised node URL ("http://host:9000/openai" → "/openai", "" when none):
 * every request to the node, inference included, goes below it.
 */
export function nodePathPrefix(nodeUrl: string): string {
  const slash = nodeUrl.indexOf('/', nodeUrl.indexOf('://') + 3);
  return slash < 0 ? '' : nodeUrl.slice(slash);
}
