import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstComplete, freshCounts, readSiteLog, type FreshnessTransition } from '../../../bench/mesh-timeline.ts';

const t = (at: number, observer: string, site: string, fresh = true): FreshnessTransition => ({ at, observer, site, fresh });

test("a site's log gives its freshness transitions and when it listened; other lines are skipped", () => {
  const lines = [
    '{"level":30,"time":100,"msg":"gateway listening"}',
    '{"level":30,"time":150,"site":"b","msg":"mesh site fresh"}',
    'not json',
    '{"level":40,"time":170,"peer":"x","msg":"mesh peer dial failed"}',
    '{"level":40,"time":180,"site":"b","msg":"mesh site stale: its models are not routed to until a newer record arrives"}',
  ];
  assert.deepEqual(readSiteLog('a', lines), { listeningAt: 100, transitions: [t(150, 'a', 'b'), t(180, 'a', 'b', false)] });
});

test('each site is complete at the first moment it holds every other fresh; a flap before that delays it', () => {
  const sites = ['a', 'b', 'c'];
  const first = firstComplete(sites, [
    t(10, 'a', 'b'),
    t(20, 'a', 'c', true),
    t(5, 'b', 'a'),
    t(15, 'b', 'a', false),
    t(30, 'b', 'c'),
    t(40, 'b', 'a'),
    t(12, 'c', 'a'),
  ]);
  assert.deepEqual([...first].sort(), [
    ['a', 20],
    ['b', 40],
  ]);
  assert.deepEqual([...freshCounts(sites, [t(1, 'c', 'a'), t(2, 'c', 'b'), t(3, 'c', 'a', false)])].sort(), [
    ['a', 0],
    ['b', 0],
    ['c', 1],
  ]);
});

test('a site that later turns stale for a moment keeps its first complete time', () => {
  const first = firstComplete(['a', 'b'], [t(10, 'a', 'b'), t(20, 'a', 'b', false), t(25, 'a', 'b'), t(11, 'b', 'a')]);
  assert.deepEqual([...first].sort(), [
    ['a', 10],
    ['b', 11],
  ]);
});
