// Issue 43 item 6 on a real gateway (in process, an injected clock): site a's /admin/sites keeps a
// harmless ordering rejection (a heartbeat naming a model list a does not hold yet: the start-up
// race) apart from a trust failure (a record for b signed with another key), shows each with its
// class, and ages each out by its own bound (REJECTION_HELD_MS) on the gateway's clock — so a
// start-up race is gone a minute later, while a forgery stays on show, and a later ordering
// rejection never hides it.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { MemoryBus, REJECTION_HELD_MS, type MemoryTransport } from '#src/mesh/index.ts';
import { modelsDigest, signRecord } from '#src/mesh/record-codec.ts';
import type { SiteRecord } from '#src/mesh/site-record.ts';
import { newSiteKey } from '#src/mesh/site-key-file.ts';
import type { SitesDocument } from '#src/mesh/sites-document.ts';
import { gatewayToml, meshToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent, type Trigger } from '#test/fixtures/events.ts';
import { tapJudgements } from '#test/fixtures/gateway-waits.ts';

const clock = new ManualClock();
const bus = new MemoryBus();
const keyA = newSiteKey();
const keyB = newSiteKey();
/** A relay let in by a (as any gossip peer is), passing on what the test gives it. */
const RELAY = newSiteKey();
let site: FleetAndGateway | undefined;
let relay: MemoryTransport | undefined;
let judged: Trigger | undefined;
let judgements = 0;

before(async () => {
  const mesh = meshToml(
    'a',
    [
      { id: 'a', publicKey: keyA.publicKey },
      { id: 'b', publicKey: keyB.publicKey },
    ],
    { more: ['heartbeat = "1m"', 'freshness = "5m"', `allowed_peers = ["${RELAY.peerId}"]`] },
  );
  site = await startFleetAndGateway(
    '[[node]]\nname = "a-gpu"\nkind = "vllm"\nmodels = ["m-a"]\n',
    (sim) => gatewayToml([{ name: 'a-gpu', url: sim.url('a-gpu'), kind: 'vllm' }], mesh),
    {
      clock,
      logLevel: 'warn',
      meshGossip: {
        key: keyA,
        transport: (own) => {
          const tapped = tapJudgements(bus.transport('peer-a', own.peerId), 'gossip judged at a');
          judged = tapped.judged;
          tapped.judged.subscribe(() => {
            judgements += 1;
          });
          return tapped.transport;
        },
        replaySinceMs: 0,
      },
    },
  );
  relay = bus.transport('peer-relay', RELAY.peerId);
  await relay.start();
});

after(async () => {
  await relay?.stop();
  await site?.close();
});

type Row = SitesDocument['sites'][number];

async function rowOfB(): Promise<Row> {
  const res = await httpJson('GET', `${site?.gw.url}/admin/sites`);
  assert.equal(res.status, 200);
  return res.json<SitesDocument>().sites.find((s) => s.id === 'b') ?? assert.fail('b is not listed');
}

/** Passes `data` on to a and waits until a judged it. */
async function relayed(data: Uint8Array): Promise<void> {
  const before = judgements;
  await relay?.publish(data);
  await untilEvent(() => judgements > before, [judged ?? assert.fail()], 'a to judge the message');
}

let revision = 1_000;
function recordOfB(extra: Partial<SiteRecord>): SiteRecord {
  revision += 1;
  return {
    v: 1,
    site: 'b',
    url: 'http://127.0.0.1:1/b',
    revision,
    issued_at: clock.now(),
    load: { in_flight: 0, queued: 0, slots: 1 },
    ...extra,
  };
}
/** b's heartbeat naming a list a has never held: b's full record has not reached a yet. */
const raceHeartbeat = (): Uint8Array => signRecord(recordOfB({ models_digest: modelsDigest([{ id: 'only-b' }]) }), keyB);
/** A record for b signed with a's key. */
const forged = (): Uint8Array => signRecord(recordOfB({ models: [{ id: 'evil' }] }), keyA);

test('an ordering rejection is shown as such and aged out; a trust failure outlives it and is never hidden by one', async () => {
  assert.equal((await rowOfB()).last_rejection, undefined, 'nothing rejected yet');

  await relayed(raceHeartbeat());
  const race = await rowOfB();
  assert.equal(race.last_rejection?.reason, 'unknown_digest');
  assert.equal(race.last_rejection?.class, 'ordering');
  assert.equal(race.last_trust_failure, undefined, 'a start-up race is no trust failure');
  clock.advance(REJECTION_HELD_MS.ordering - 1);
  assert.equal((await rowOfB()).last_rejection?.reason, 'unknown_digest', 'still shown just before its age');
  clock.advance(1);
  assert.equal((await rowOfB()).last_rejection, undefined, 'gone once its age is reached');

  await relayed(forged());
  clock.advance(5_000);
  await relayed(raceHeartbeat());
  const both = await rowOfB();
  assert.equal(both.last_rejection?.reason, 'unknown_digest', 'the latest is the ordering rejection');
  assert.equal(both.last_trust_failure?.reason, 'bad_signature', 'the forgery is not hidden by it');
  assert.equal(both.last_trust_failure?.class, 'trust');
  assert.equal(both.last_trust_failure?.age_ms, 5_000);
  clock.advance(REJECTION_HELD_MS.ordering);
  const later = await rowOfB();
  assert.equal(later.last_rejection?.reason, 'bad_signature', 'the ordering one aged out, the forgery stays');
  assert.equal(later.last_trust_failure?.reason, 'bad_signature');
  clock.advance(REJECTION_HELD_MS.trust - REJECTION_HELD_MS.ordering - 5_000);
  const aged = await rowOfB();
  assert.deepEqual([aged.last_rejection, aged.last_trust_failure], [undefined, undefined], 'a trust failure ages out too');
});
