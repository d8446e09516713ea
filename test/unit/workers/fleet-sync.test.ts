// The owner's fleet push: the whole fleet when the nodes change, the changed views alone when the
// same nodes' views do, the routers' rooms alone when only they did (a lease came back), nothing
// when none did; and the worker's mirror applying a change of views.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeView } from '#src/nodes/index.ts';
import type { RouterRoom } from '#src/routing/index.ts';
import { changedViews, FleetSync } from '#src/workers/fleet-sync.ts';
import { ViewMirror } from '#src/workers/view-mirror.ts';
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

test('one node of 200 changed: only its view crosses, at its index, and the mirror then reads what the owner does', () => {
  let views: readonly NodeView[] = Array.from({ length: 200 }, (_, i) => node(`n${i}`));
  const sync = new FleetSync({ views: () => views, connectionLimit: () => undefined, rooms: () => [] });
  const mirror = new ViewMirror(sync.current(), () => 0);
  // What a learned figure on one node does to the registry's views: a new array, that node's view new, the rest the same objects.
  const changed = { ...node('n117'), lacking: { '/v1/embeddings': 'not found' } };
  views = views.map((v, i) => (i === 117 ? changed : v));
  const message = sync.next();
  assert.equal(message?.t, 'views', `a change of one node sends its view, not the fleet: ${message?.t}`);
  assert.ok(message?.t === 'views');
  assert.deepEqual(message.changed, [[117, changed]]);
  assert.deepEqual(message.rooms, []);
  mirror.replaceViews(message.changed, message.rooms);
  assert.deepEqual(mirror.views(), views);
  assert.equal(mirror.view('n117'), changed);
  assert.equal(mirror.view('n3'), views[3]);
  assert.equal(sync.next(), undefined, 'nothing changed since');
});

test('a view whose learned figures alone moved: only those figures cross, and the worker keeps the rest of its view', () => {
  let views: readonly NodeView[] = [node('a'), node('b', { models: ['m'] })];
  const sync = new FleetSync({ views: () => views, connectionLimit: () => undefined, rooms: () => [] });
  // What the worker holds: a clone of what the owner pushed, as a worker thread receives it.
  const mirror = new ViewMirror(structuredClone(sync.current()), () => 0);
  const held = mirror.view('b') as NodeView;
  const rate = { tokens: 400, decodeMs: 1000, firstTokenMs: undefined, samples: 8, atMs: 0 };
  const taught = { ...(views[1] as NodeView), decodeRates: { m: rate } };
  views = [views[0] as NodeView, taught];
  const message = sync.next();
  assert.ok(message?.t === 'views', `a learned figure sends the change of one view: ${message?.t}`);
  assert.deepEqual(message.changed, [[1, { node: 'b', decodeRates: { m: rate } }]], 'the figures alone, not the view');
  mirror.replaceViews(structuredClone(message.changed), message.rooms);
  const now = mirror.view('b') as NodeView;
  assert.deepEqual(now, taught, 'the worker reads what the owner does');
  assert.equal(now.decodeRates?.m?.tokens, 400, 'the new figure at once');
  assert.equal(now.spec, held.spec, 'the rest of its view is the one it held');
  assert.equal(now.modelsById, held.modelsById);
  // Anything else changing sends the whole view.
  const dead = { ...taught, health: { ...taught.health, status: 'dead' as const } };
  views = [views[0] as NodeView, dead];
  const next = sync.next();
  assert.ok(next?.t === 'views');
  assert.deepEqual(next.changed, [[1, dead]]);
});

test('the whole fleet crosses when the nodes themselves change (added, removed, reordered) or the connection limit does', () => {
  let views: readonly NodeView[] = [node('a'), node('b')];
  let limit: number | undefined;
  const sync = new FleetSync({ views: () => views, connectionLimit: () => limit, rooms: () => [] });
  views = [node('b'), node('a')];
  assert.equal(sync.next()?.t, 'fleet', 'reordered');
  views = [...views, node('c')];
  assert.equal(sync.next()?.t, 'fleet', 'added');
  views = views.slice(1);
  assert.equal(sync.next()?.t, 'fleet', 'removed');
  limit = 8;
  assert.equal(sync.next()?.t, 'fleet', 'connection limit');
  assert.deepEqual(changedViews([node('a')], [node('x')]), undefined, 'another node at the same index');
});

test('a changed view that does not match the mirror is refused with the node named, the mirror left as it was', () => {
  const views = [node('a'), node('b')];
  const mirror = new ViewMirror({ views, connectionLimit: undefined, rooms: [] }, () => 0);
  assert.throws(() => mirror.replaceViews([[1, node('z')]], []), /a changed view for z at 1 does not match the mirror \(b\)/);
  assert.deepEqual(mirror.views(), views);
});
