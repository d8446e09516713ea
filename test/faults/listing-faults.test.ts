// Faults in a node's model listing (/v1/models) while it keeps serving: each must be recognised as
// a failed (or empty) listing, never crash or wedge discovery, and cost clients nothing, because the
// healthy node serving the same model takes the traffic the faulty node's listing no longer vouches for.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertNoLeaks, FaultBed, FigureTable, runCase, simNode, summary } from '#test/faults/harness.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const CASES = [
  { name: '/v1/models without data', model: 'm-nodata', fault: 'no_data', states: ['degraded', 'expired'] },
  { name: '200 with an error body', model: 'm-errbody', fault: 'error_body', states: ['degraded', 'expired'] },
  { name: 'garbage JSON listing', model: 'm-garbage', fault: 'garbage', states: ['degraded', 'expired'] },
  { name: 'listing hangs', model: 'm-hang', fault: 'hang', states: ['degraded', 'expired'] },
  { name: 'listing 5xx', model: 'm-5xx', fault: 'error500', states: ['degraded', 'expired'] },
  { name: 'empty listing', model: 'm-empty', fault: 'empty', states: ['known_empty'] },
] as const;

const CONCURRENCY = 12;
const table = new FigureTable('Model-listing faults (healthy + faulty node per model)');
let bed: FaultBed;

before(async () => {
  const fleet = CASES.flatMap((c, i) => [
    simNode(`good-${c.model}`, 'vllm', [c.model]),
    simNode(`bad-${c.model}`, i % 2 === 0 ? 'vllm' : 'llamacpp', [c.model]),
  ]);
  bed = await FaultBed.start({ fleet: fleet.join('\n\n') });
});

after(async () => {
  table.print();
  await bed?.stop();
});

async function listingCase(index: number): Promise<void> {
  const c = CASES[index];
  assert.ok(c);
  const bad = `bad-${c.model}`;
  const stateOf = async (): Promise<{ state: string; error: unknown }> => {
    const detail = (await bed.health()).details.find((d) => d.name === bad);
    return { state: detail?.models.state ?? '', error: (detail?.models as { last_error?: unknown } | undefined)?.last_error };
  };
  let stateAtEnd = '';
  const { tally, leaks } = await runCase({
    bed,
    table,
    name: c.name,
    nodes: [bad, `good-${c.model}`],
    load: { requests: 120, concurrency: CONCURRENCY, seed: 300 + index, model: c.model, paceMs: 60 },
    // The load starts once the gateway has recognised the fault (discovery runs every 300 ms).
    arrange: async () => {
      await bed.setFaults(bad, { models: c.fault });
      await untilEvent(
        async () => (c.states as readonly string[]).includes((await stateOf()).state),
        [bed.gw.process.output],
        `${bad} listing ${c.states.join('/')}`,
      );
    },
    restore: async () => {
      stateAtEnd = (await stateOf()).state;
      await bed.clearFaults(bad);
    },
  });
  assert.equal(tally.clientErrors, 0, summary(tally));
  assert.ok((c.states as readonly string[]).includes(stateAtEnd), `still ${c.states.join('/')} at the end, not ${stateAtEnd}`);
  assertNoLeaks(leaks, CONCURRENCY);
  // Once the listing answers again the node is back in the rotation.
  await untilEvent(async () => (await stateOf()).state === 'known', [bed.gw.process.output], `${bad} listed again`);
}

test('a listing without "data" is a failed refresh, not an empty node, and clients see no error', () => listingCase(0));
test('a 200 listing carrying an error body is a failed refresh and clients see no error', () => listingCase(1));
test('a listing that is not JSON is a failed refresh and clients see no error', () => listingCase(2));
test('a listing that hangs times out without delaying anything else, and clients see no error', () => listingCase(3));
test('a listing answering 5xx is a failed refresh and clients see no error', () => listingCase(4));
test('a node listing no models stops getting requests for them, and clients see no error', () => listingCase(5));
