// [cluster] tenant limits with request workers: a worker's tenant admission reaches the owner's
// shared admission (tenants/tenant-desk.ts), so two replicas of two workers each still admit
// exactly requests_per_minute across them, and every admitted request leaves the shared
// in-flight count when it ends (max_concurrent = 1 admits one more afterwards).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { type Replicas } from '#test/fixtures/cluster-replicas.ts';
import { startSlotReplicas, type SlotReplicas } from '#test/fixtures/slot-replicas.ts';
import { postFresh, type Answer } from '#test/fixtures/fresh-connection.ts';

const TENANTS = `
[[tenants]]
name = "rpm"
keys = ["sk-rpm-w"]
requests_per_minute = 4

[[tenants]]
name = "one"
keys = ["sk-one-w"]
max_concurrent = 1
`;

/**
 * Long, so that a count that leaked (held until lease_ttl) and a busy machine's slow settle (one
 * round trip worker → owner → Lua) are told apart by a wide margin, not by a stopwatch's 1.5 s.
 */
const LEASE_TTL_S = 60;

let rig: SlotReplicas | undefined;
let replicas: Replicas | undefined;

before(async () => {
  rig = await startSlotReplicas({
    node: { slots: 64, holdMs: 5 },
    count: 2,
    workers: 2,
    leaseTtl: `${LEASE_TTL_S}s`,
    extra: `[routing]\nmax_queue = 1000\nqueue_timeout = "60s"\n${TENANTS}`,
  });
  ({ replicas } = rig);
});
after(() => rig?.close());

function post(url: string, key: string, user: string): Promise<Answer> {
  return postFresh(
    `${url}/v1/chat/completions`,
    { model: 'm', user, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 },
    { authorization: `Bearer ${key}` },
  );
}

test('two replicas of two workers: exactly requests_per_minute admitted across them', async () => {
  const gws = replicas?.gateways ?? [];
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, i) => post(gws[i % gws.length]?.url ?? '', 'sk-rpm-w', `w${i}`)),
  );
  assert.equal(answers.filter((a) => a.status === 200).length, 4);
  assert.equal(answers.filter((a) => a.status === 429).length, 8);
});

test("a worker's admitted request leaves the shared in-flight count when it ends", async () => {
  const gws = replicas?.gateways ?? [];
  // The settle reaches the store one round trip after the answer ended (worker → owner → Lua), so a
  // request sent at once may still meet the count: it is asked again for up to half of lease_ttl
  // (30 s, a bound for a busy machine). A count that leaked would hold until lease_ttl, and fail this.
  for (let i = 0; i < 4; i += 1) {
    const started = Date.now();
    let answer = await post(gws[i % gws.length]?.url ?? '', 'sk-one-w', `o${i}`);
    while (answer.status === 429 && Date.now() - started < (LEASE_TTL_S * 1_000) / 2)
      answer = await post(gws[i % gws.length]?.url ?? '', 'sk-one-w', `o${i}`);
    assert.equal(answer.status, 200, `request ${i} after the one before ended`);
  }
});
