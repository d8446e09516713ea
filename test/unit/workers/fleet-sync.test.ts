// The owner's fleet push: the whole fleet when the views change, the routers' rooms alone when only
// they did (a lease came back), nothing when neither did.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeView } from '#src/nodes/index.ts';
import type { RouterRoom } from '#src/routing/index.ts';
import { FleetSync } from '#src/workers/fleet-sync.ts';
import { node } from '#test/fixtures/builders.ts';

test('pushes the fleet when its views change, the rooms alone when only they change, else nothing', () => {
  let views: readonly NodeView[] = [node('a')];
  let rooms: RouterRoom[] = [];
  const sync = new FleetSync({ views: () => views, connectionLimit: () => undefined, rooms: () => rooms });
  assert.deepEqual(sync.current(), { views, connectionLimit: undefined, rooms: [] });
  assert.equal(sync.next(), undefined, 'nothing changed');
  rooms = [{ node: 'r', pending: undefined, switchDue: false, failedLoads: [], busy: ['x'] }];
  assert.deepEqual(sync.next(), { t: 'rooms', rooms });
  rooms = [{ node: 'r', pending: undefined, switchDue: false, failedLoads: [], busy: ['x'] }];
  assert.equal(sync.next(), undefined, 'the same rooms, compared by value');
  views = [node('a'), node('b')];
  assert.deepEqual(sync.next(), { t: 'fleet', fleet: { views, connectionLimit: undefined, rooms } });
  assert.equal(sync.current().views, views);
});
