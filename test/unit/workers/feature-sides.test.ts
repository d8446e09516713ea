// A worker's sides of the features' crossings (src/workers/feature-sides.ts): started by the name
// the owner began each under, from the listed starters; the owner's messages reach each by name,
// unread; their ports are handed to the plane under their keys; a side with nothing to do is left
// out; a name no starter is listed for fails the start; once the worker drained, each side lets go of what it holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { partIn, partKey } from '#src/core/part-key.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import type { WorkerSideStart } from '#src/plane/index.ts';
import { WorkerFeatureSides } from '#src/workers/feature-sides.ts';
import type { WorkerMessage } from '#src/workers/protocol.ts';

const ECHO = partKey<{ readonly said: unknown[] }>('echo');

function host(sent: WorkerMessage[]) {
  return { config: () => ({}) as GatewayConfig, clock: new ManualClock(), send: (m: WorkerMessage) => void sent.push(m) };
}

const echo: WorkerSideStart = (init, h) => {
  const said: unknown[] = [init];
  return {
    receive: (message) => {
      said.push(message);
      h.send({ answered: message });
    },
    port: [ECHO, { said }],
  };
};

test('each side started by its name gets its init and its messages, answers under its name, and gives its port', async () => {
  const sent: WorkerMessage[] = [];
  const sides = await WorkerFeatureSides.start({ echo: 'hello' }, { echo, quiet: () => undefined }, host(sent));
  sides.receive({ t: 'feature', name: 'echo', message: 1 });
  sides.receive({ t: 'feature', name: 'other', message: 2 });
  assert.deepEqual(partIn(sides.ports(), ECHO)?.said, ['hello', 1]);
  assert.deepEqual(sent, [{ t: 'feature', name: 'echo', message: { answered: 1 } }]);
});

test('a side with nothing to do in this worker is left out; an absent feature starts nothing', async () => {
  const started: string[] = [];
  const quiet: WorkerSideStart = async () => {
    started.push('quiet');
    return undefined;
  };
  const sides = await WorkerFeatureSides.start({ quiet: null }, { echo, quiet }, host([]));
  assert.deepEqual(started, ['quiet']);
  assert.equal(sides.ports().size, 0);
  sides.receive({ t: 'feature', name: 'quiet', message: 'dropped' });
});

test('a name the owner began that no worker side is listed for fails the start, naming it', async () => {
  await assert.rejects(WorkerFeatureSides.start({ unknown: null }, { echo }, host([])), /no worker side is listed for: unknown/);
});

test('once the worker drained, each side that holds something lets it go', async () => {
  const closed: string[] = [];
  const holding: WorkerSideStart = () => ({ receive: () => {}, port: undefined, close: () => void closed.push('holding') });
  const sides = await WorkerFeatureSides.start({ holding: null, echo: null }, { echo, holding }, host([]));
  sides.close();
  assert.deepEqual(closed, ['holding']);
});
