// Pure: `switchyard init`'s arguments read, or a message naming what is wrong with them.

import { isIP } from 'node:net';
import { normalizeNodeUrl, parseDurationMs, parseListenAddress } from '#src/config/index.ts';

export interface InitArgs {
  readonly urls: readonly string[];
  /** undefined = stdout (`--out -`). */
  readonly out: string | undefined;
  readonly force: boolean;
  readonly listen: string;
  readonly timeoutMs: number;
  /** `--resolver IP:PORT`: the DNS server asked for the URLs' names; undefined = the system's. */
  readonly resolver?: { readonly host: string; readonly port: number };
}

export type InitArgsResult = { readonly ok: true; readonly args: InitArgs } | { readonly ok: false; readonly message: string };

const DEFAULT_LISTEN = '127.0.0.1:8080';
/** Where `serve` looks first when it is given no --config. */
const DEFAULT_OUT = './switchyard.toml';
const DEFAULT_TIMEOUT_MS = 3000;

export function parseInitArgs(argv: readonly string[]): InitArgsResult {
  const urls: string[] = [];
  const flags = new Map<string, string>();
  let force = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--force') force = true;
    else if (arg.startsWith('--')) {
      const [flag = '', inline] = arg.slice(2).split(/=(.*)/s, 2);
      if (!['out', 'listen', 'timeout', 'resolver'].includes(flag)) return { ok: false, message: `unknown option ${arg}` };
      const value = inline ?? argv[++i];
      if (value === undefined || value === '') return { ok: false, message: `--${flag} needs a value` };
      flags.set(flag, value);
    } else if (arg.startsWith('-')) return { ok: false, message: `unknown option ${arg}` };
    else {
      const url = serverUrl(arg);
      if (!url.ok) return url;
      if (!urls.includes(url.value)) urls.push(url.value);
    }
  }
  if (urls.length === 0) return { ok: false, message: 'give at least one server URL' };
  const out = flags.get('out') ?? DEFAULT_OUT;
  if (force && out === '-') return { ok: false, message: '--force only goes with a file' };
  let timeoutMs = DEFAULT_TIMEOUT_MS;
  const timeout = flags.get('timeout');
  if (timeout !== undefined) {
    const parsed = parseDurationMs(timeout);
    if (!parsed.ok || parsed.value <= 0)
      return { ok: false, message: `--timeout ${parsed.ok ? 'must be more than 0' : parsed.message}` };
    timeoutMs = parsed.value;
  }
  const resolverText = flags.get('resolver');
  const resolver = resolverText === undefined ? undefined : parseListenAddress(resolverText);
  if (resolver !== undefined && (!resolver.ok || isIP(resolver.value.host) === 0 || resolver.value.port === 0))
    return { ok: false, message: `--resolver must be a DNS server's IP:PORT, like 10.0.0.2:53` };
  return {
    ok: true,
    args: {
      urls,
      out: out === '-' ? undefined : out,
      force,
      listen: flags.get('listen') ?? DEFAULT_LISTEN,
      timeoutMs,
      ...(resolver === undefined ? {} : { resolver: resolver.value }),
    },
  };
}

/** A server's base URL as config wants it; "host:port" gets http://, a trailing /v1 is dropped. */
function serverUrl(text: string): { ok: true; value: string } | { ok: false; message: string } {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  const normalized = normalizeNodeUrl(withScheme.replace(/\/v1\/?$/i, ''));
  return normalized.ok ? normalized : { ok: false, message: `${text}: ${normalized.message}` };
}
