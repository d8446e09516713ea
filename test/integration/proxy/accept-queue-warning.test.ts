// A gateway whose `[server] listen_backlog` is above what this machine's net.core.somaxconn gives
// says so at start, once, with both figures (and says nothing where the cap is high enough).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '#src/config-tables.ts';
import { ACCEPT_QUEUE_CAPPED, readSomaxconn } from '#src/plane/accept-queue.ts';
import { Gateway } from '#src/main.ts';
import { capturedLogger } from '#test/fixtures/captured-logs.ts';

test(
  "a gateway whose listen_backlog is above this machine's cap says so at start, with both figures",
  { timeout: 30_000 },
  async () => {
    const cap = readSomaxconn();
    const backlog = 65_535;
    const loaded = loadConfig(
      `[server]\nlisten = "127.0.0.1:0"\nlisten_backlog = ${backlog}\n[[nodes]]\nname = "n1"\nurl = "http://127.0.0.1:1"\nkind = "vllm"\n`,
      {},
    );
    assert.ok(loaded.ok, JSON.stringify(loaded));
    const { logger, lines } = capturedLogger();
    const gateway = await Gateway.start({ config: loaded.config, logger });
    try {
      const warned = lines.filter((line) => line.msg === ACCEPT_QUEUE_CAPPED);
      if (cap === undefined || cap >= backlog) assert.equal(warned.length, 0);
      else
        assert.deepEqual(
          warned.map((line) => [line.level, line.listen_backlog, line.somaxconn]),
          [[40, backlog, cap]],
        );
    } finally {
      await gateway.close();
    }
  },
);
