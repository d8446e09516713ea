// Who gets a live-feed slot (shared by client address) and who is dropped for not draining.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  admitFeed,
  FEED_STALL_BYTES,
  FEED_STALL_MS,
  feedAddressKey,
  isStalled,
  lagSince,
  MAX_FEED_CLIENTS,
  MAX_FEEDS_PER_ADDRESS,
  type FeedSlot,
} from '#src/admin/dashboard/feed-admission.ts';

const slots = (...groups: [string, number][]): FeedSlot[] =>
  groups.flatMap(([address, n]) => Array.from({ length: n }, () => ({ address })));
const spread = (addresses: number, each: number): FeedSlot[] =>
  slots(...Array.from({ length: addresses }, (_, i): [string, number] => [`10.0.0.${i}`, each]));

test('admission: an address holds at most its share; a full feed makes room for an address holding fewer', () => {
  const cases: { name: string; slots: FeedSlot[]; address: string; kind: string; victim?: number }[] = [
    { name: 'empty', slots: [], address: 'a', kind: 'admit' },
    { name: 'own address below its cap', slots: slots(['a', MAX_FEEDS_PER_ADDRESS - 1]), address: 'a', kind: 'admit' },
    { name: 'own address at its cap', slots: slots(['a', MAX_FEEDS_PER_ADDRESS]), address: 'a', kind: 'refuse' },
    {
      name: 'full, newcomer from a new address',
      slots: spread(MAX_FEED_CLIENTS / MAX_FEEDS_PER_ADDRESS, MAX_FEEDS_PER_ADDRESS),
      address: 'b',
      kind: 'admit_replacing',
      victim: 0,
    },
    {
      name: 'full, the busiest address gives its oldest slot',
      slots: [...slots(['x', 1], ['y', 1]), ...spread(MAX_FEED_CLIENTS / MAX_FEEDS_PER_ADDRESS, MAX_FEEDS_PER_ADDRESS).slice(2)],
      address: 'b',
      kind: 'admit_replacing',
      victim: 4,
    },
    { name: 'full, every address holds one', slots: spread(MAX_FEED_CLIENTS, 1), address: 'b', kind: 'refuse' },
    {
      name: 'full, newcomer holding as many as the busiest but one',
      slots: spread(MAX_FEED_CLIENTS / 2, 2),
      address: '10.0.0.0',
      kind: 'refuse',
    },
  ];
  for (const c of cases) {
    const admission = admitFeed(c.slots, c.address);
    assert.equal(admission.kind, c.kind, c.name);
    if (admission.kind === 'admit_replacing') assert.equal(admission.victim, c.victim, c.name);
    if (admission.kind === 'refuse') assert.match(admission.reason, /live feed/, c.name);
  }
});

test('a client is stalled once its unsent bytes stay above the threshold for the stall time', () => {
  let since = lagSince(undefined, FEED_STALL_BYTES, 0);
  assert.equal(since, undefined, 'at the threshold: keeping up');
  since = lagSince(since, FEED_STALL_BYTES + 1, 1_000);
  assert.equal(since, 1_000);
  since = lagSince(since, FEED_STALL_BYTES * 10, 5_000);
  assert.equal(since, 1_000, 'the lag keeps its start');
  assert.equal(isStalled(since, 1_000 + FEED_STALL_MS - 1), false);
  assert.equal(isStalled(since, 1_000 + FEED_STALL_MS), true);
  assert.equal(lagSince(since, 0, 6_000), undefined, 'drained: the lag is forgotten');
  assert.equal(isStalled(undefined, 1e12), false);
});

test('feeds count against an IPv4 address, or an IPv6 /64', () => {
  const cases: [string, string][] = [
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['::1', '0:0:0:0::/64'],
    ['2001:db8:1:2:aaaa::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:bbbb:cccc:dddd:eeee', '2001:db8:1:2::/64'],
    ['2001:db8::7', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['', ''],
  ];
  for (const [address, key] of cases) assert.equal(feedAddressKey(address), key, address);
});
