// Issue 20, item 6: SiteStore.apply remembered every (peer, reason) in a Set that was never pruned,
// and wrote a warn line and a dashboard transition for each; author keys are free, so 10,000
// messages with fresh author keys gave 11,920 warn lines in 21 s and 492 of the dashboard's 500
// event entries. Now the (peer, reason) memory is an LRU, the log is rate-limited per reason (the
// lines held back are counted on the next one), and rejections from authors that are neither a
// pinned site nor an admitted peer stay out of the dashboard's transition log (metrics only).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Logger } from 'pino';
import { subscribeMeshLogs } from '#src/mesh/mesh-log.ts';
import { rejectionTransition } from '#src/admin/dashboard/transitions.ts';
import { signRecord } from '#src/mesh/record-codec.ts';
import type { SiteRecord } from '#src/mesh/site-record.ts';
import { newSiteKey } from '#src/mesh/site-key-file.ts';
import { MeshHarness, named, settle } from '#test/unit/mesh/mesh-harness.ts';

const MESSAGES = 10_000;

/** A logger that only counts warn lines (what the mesh log writes for a rejection). */
function countingLogger(): { logger: Logger; warns: Record<string, unknown>[] } {
  const warns: Record<string, unknown>[] = [];
  const noop = (): void => {};
  const logger = {
    warn: (fields: Record<string, unknown>) => warns.push(fields),
    info: noop,
    debug: noop,
    error: noop,
  } as unknown as Logger;
  return { logger, warns };
}

test(
  `${MESSAGES} forged records from fresh author keys: bounded warn lines, no dashboard transitions, every one counted`,
  { timeout: 240_000 },
  async () => {
    const h = new MeshHarness(['a', 'b']);
    try {
      const a = await h.start('a');
      await h.start('b');
      // a's events, as the gateway wires them: the log, and the dashboard's transition drafts.
      const { logger, warns } = countingLogger();
      const offLog = subscribeMeshLogs(logger, a.bus);
      let transitions = 0;
      const offDashboard = a.bus.on('mesh:record-rejected', (e) => {
        if (rejectionTransition(e) !== undefined) transitions += 1;
      });
      const relay = h.rogue(); // admitted at a, as a relay would be; passes on whatever it hears
      relay.onMessage(() => 'accept');
      await relay.start();
      const mallory = newSiteKey();
      const now = h.clock.now();
      const forged: SiteRecord = {
        v: 1,
        site: 'b',
        url: 'http://127.0.0.1:1/b',
        revision: now * 4096,
        issued_at: now,
        models: [{ id: 'evil' }],
        load: { in_flight: 0, queued: 0, slots: 1 },
      };
      const data = signRecord(forged, mallory); // claims b, signed by no pinned key
      for (let i = 0; i < MESSAGES; i += 1) {
        // Each message from an author of its own, on the bus only while it publishes (a admits no
        // such peer, so the message reaches a through the relay).
        const author = h.bus.transport(`author-${i}`, `author-key-${i}`);
        await author.start();
        await author.publish(data);
        await author.stop();
        if (i % 100 === 99) await settle();
      }
      await settle();
      const rejected = named(a, 'mesh:record-rejected').filter((r) => r.site === 'b' && r.reason === 'bad_signature');
      assert.equal(rejected.length, MESSAGES, 'every message was judged and counted');
      offLog();
      offDashboard();
      assert.ok(warns.length <= 10, `warn lines: ${warns.length} for ${MESSAGES} rejections`);
      assert.equal(transitions, 0, 'rejections from unknown authors never reach the dashboard transition log');
    } finally {
      await h.stopAll();
    }
  },
);
