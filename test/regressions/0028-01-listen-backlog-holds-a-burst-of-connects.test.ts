// Issue 28, item 1 (ten thousand streams): 10,000 clients connecting at 1,000 a second overflowed
// the gateway's accept queue (Node's default listen backlog, 511: the kernel counted ~100,000
// TcpExtListenOverflows during the ramp, none when the same clients went straight to an upstream
// listening with a larger backlog) and 522 of 9,900 streams were reset. Every gateway listener now
// asks for LISTEN_BACKLOG (4096; Linux caps it at net.core.somaxconn). Checked by what the kernel
// reports for the listening socket (`ss`: a listener's Send-Q is its backlog), not by a timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { listenOn } from '#src/plane/index.ts';
import { LISTEN_BACKLOG } from '#src/plane/listener.ts';
import { ActiveRequests } from '#src/proxy/index.ts';

function somaxconn(): number | undefined {
  try {
    return Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8').trim());
  } catch {
    return undefined;
  }
}

function backlogOf(port: number): number | undefined {
  try {
    const out = execFileSync('ss', ['-ltnH', `sport = :${port}`], { encoding: 'utf8' });
    const fields = out.trim().split(/\s+/);
    return Number(fields[2]);
  } catch {
    return undefined;
  }
}

test('a gateway listener asks for a backlog that holds a burst of connects, not Node\'s 511', async (t) => {
  const cap = somaxconn();
  if (cap === undefined || cap <= 511) return t.skip(`net.core.somaxconn is ${cap}: the kernel caps any backlog at it`);
  const listening = await listenOn({
    table: () => new Map(),
    host: '127.0.0.1',
    port: 0,
    reusePort: false,
    limits: { requestTimeoutMs: 5000, headerTimeoutMs: 5000, maxHeaderBytes: 16384 },
    activeRequests: new ActiveRequests(),
    onHandlerError: () => {},
  });
  try {
    const backlog = backlogOf(listening.address.port);
    if (backlog === undefined || Number.isNaN(backlog)) return t.skip('no `ss` here to read the listening socket');
    assert.equal(backlog, Math.min(LISTEN_BACKLOG, cap), 'the listening socket\'s backlog');
    assert.ok(backlog > 511, `backlog ${backlog} is above Node's default of 511`);
  } finally {
    await new Promise<void>((resolve) => listening.server.close(() => resolve()));
  }
});
