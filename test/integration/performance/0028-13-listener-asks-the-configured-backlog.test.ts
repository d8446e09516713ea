// Issue 28, ten thousand streams: the gateway's listeners took Node's default accept queue (511),
// which lasts half a second at 1,000 new connections a second; a busy event loop past that has the
// kernel drop SYNs (TcpExtListenOverflows) and the clients wait a 1 s / 3 s retransmission before
// they are even connected. `[server] listen_backlog` (default 4096; Linux caps it at
// net.core.somaxconn) is now what every listener asks listen(2) for. Checked on the arguments
// given to listen() and, where `ss` is installed, on the listening socket itself (ss shows a
// listener's backlog as its Send-Q), never by a timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CONFIG_DEFAULTS } from '#src/config/defaults.ts';
import { formatProblems } from '#src/config/load.ts';
import { loadConfig } from '#src/config-tables.ts';
import { ActiveRequests } from '#src/proxy/index.ts';
import * as listener from '#src/plane/listener.ts';

const limits = { ...CONFIG_DEFAULTS.server, listenBacklog: 1234 };

test('the listener gives listen() the configured backlog (default 4096)', () => {
  assert.equal(CONFIG_DEFAULTS.server.listenBacklog, 4096);
  assert.equal(typeof listener.listenArguments, 'function', 'listener.ts states what listen() is given');
  assert.deepEqual(listener.listenArguments({ host: '127.0.0.1', port: 0, reusePort: false, limits }), {
    host: '127.0.0.1',
    port: 0,
    reusePort: false,
    backlog: 1234,
  });
});

const ONE_NODE = '[[nodes]]\nname = "gpu-a"\nurl = "http://10.0.0.5:8000"\n';

test('[server] listen_backlog is read, and bounded', () => {
  const read = loadConfig(`[server]\nlisten_backlog = 8192\n${ONE_NODE}`, {});
  assert.ok(read.ok, read.ok ? '' : formatProblems(read.problems));
  assert.equal(read.config.server.listenBacklog, 8192);
  for (const bad of ['0', '70000', '1.5']) {
    const result = loadConfig(`[server]\nlisten_backlog = ${bad}\n${ONE_NODE}`, {});
    assert.ok(!result.ok && formatProblems(result.problems).includes('listen_backlog'), bad);
  }
});

/** The backlog of the socket listening on 127.0.0.1:port, as the kernel holds it (ss's Send-Q), or undefined without ss. */
function kernelBacklog(port: number): number | undefined {
  let out: string;
  try {
    out = execFileSync('ss', ['-Hltn', `sport = :${port}`], { encoding: 'utf8', timeout: 5000 });
  } catch {
    return undefined;
  }
  const fields = out.trim().split(/\s+/);
  return fields.length >= 3 ? Number(fields[2]) : undefined;
}

test('the listening socket holds that backlog (capped by net.core.somaxconn)', { timeout: 30_000 }, async (t) => {
  const listening = await listener.listenOn({
    endpoints: { table: new Map() },
    host: '127.0.0.1',
    port: 0,
    reusePort: false,
    limits,
    activeRequests: new ActiveRequests(),
    onHandlerError: () => {},
  });
  try {
    const held = kernelBacklog(listening.address.port);
    if (held === undefined) return t.skip('no ss on this machine');
    const cap = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8').trim());
    assert.equal(held, Math.min(1234, cap));
  } finally {
    await new Promise<void>((resolve) => listening.server.close(() => resolve()));
  }
});
