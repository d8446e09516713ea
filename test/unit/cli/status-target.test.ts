// statusTargetOf: which address `switchyard status` reads for a loaded config (src/cli/status-target.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '#src/config-tables.ts';
import { statusTargetOf } from '#src/cli/status-target.ts';

function targetFor(extra: string): ReturnType<typeof statusTargetOf> {
  const loaded = loadConfig(`${extra}\n[[nodes]]\nname = "a"\nurl = "http://127.0.0.1:9"\n`, {});
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  return statusTargetOf(loaded.config, 'f.toml');
}

const CASES: readonly [string, string, string | undefined, string | undefined][] = [
  ['the default listen', '', 'http://127.0.0.1:8080', undefined],
  ['a host and port', '[server]\nlisten = "10.0.0.5:9000"', 'http://10.0.0.5:9000', undefined],
  ['every IPv4 interface → loopback', '[server]\nlisten = "0.0.0.0:9000"', 'http://127.0.0.1:9000', undefined],
  ['every IPv6 interface → ::1', '[server]\nlisten = "[::]:9000"', 'http://[::1]:9000', undefined],
  ['an IPv6 host is bracketed', '[server]\nlisten = "[fd00::2]:9000"', 'http://[fd00::2]:9000', undefined],
  [
    'the admin listener wins',
    '[server]\nlisten = "0.0.0.0:9000"\n[admin]\nlisten = "127.0.0.1:9090"',
    'http://127.0.0.1:9090',
    undefined,
  ],
  [
    'port 0 cannot be known',
    '[server]\nlisten = "127.0.0.1:0"',
    undefined,
    'f.toml: [server] listen has port 0 (a free port picked at start); give --url',
  ],
  [
    'an admin port 0 names [admin]',
    '[admin]\nlisten = "127.0.0.1:0"',
    undefined,
    'f.toml: [admin] listen has port 0 (a free port picked at start); give --url',
  ],
];

for (const [name, extra, url, problem] of CASES) {
  test(`statusTargetOf: ${name}`, () => {
    const result = targetFor(extra);
    if (url !== undefined) assert.deepEqual(result, { ok: true, target: { url, token: undefined } });
    else assert.deepEqual(result, { ok: false, problem });
  });
}

test('statusTargetOf: the admin token comes along', () => {
  assert.deepEqual(targetFor('[admin]\ntoken = "t0ken"'), { ok: true, target: { url: 'http://127.0.0.1:8080', token: 't0ken' } });
});
