// Issue 10, item 4: a llama-server router (or an `auto` node saying router on /props) listing many
// models made the gateway send one `/props?model=` per listed id on every poll, all at once (62,000
// requests in 30 s for a 100,000-id listing; RSS 150 MB → 1.5 GB). Now a listing is cut to
// `discovery.max_models_per_node` entries with ids of at most `max_model_id_bytes`, and each poll
// asks at most `capacity_requests_per_poll` models, 4 at a time, taking turns across polls; the cut
// is counted in gateway_discovery_limited_total and logged once per node, not once per poll.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '#src/config-tables.ts';
import { Gateway } from '#src/main.ts';
import { capturedLogger } from '#test/fixtures/captured-logs.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { metric } from '#test/fixtures/gateway-state.ts';
import { loadedEntry, startListingNode, type ListingNode } from '#test/fixtures/listing-node.ts';
import { on, untilEvent } from '#test/fixtures/events.ts';

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function gatewayFor(
  node: ListingNode,
  discoveryKeys = '',
): Promise<{ gateway: Gateway; lines: Record<string, unknown>[] }> {
  const toml = `[server]\nlisten = "127.0.0.1:0"\n[discovery]\ninterval = "100ms"\n${discoveryKeys}\n[[nodes]]\nname = "router"\nurl = "${node.url}"\nkind = "llamacpp"\n`;
  const loaded = loadConfig(toml, {});
  assert.ok(loaded.ok, JSON.stringify(loaded));
  const { logger, lines } = capturedLogger();
  const gateway = await Gateway.start({ config: loaded.config, logger });
  closers.push(() => gateway.close());
  return { gateway, lines };
}

const ids = (count: number): string[] => Array.from({ length: count }, (_, i) => `model-${String(i).padStart(5, '0')}`);

test('a router listing 5,000 loaded models gets at most 64 /props?model= per poll, 4 at a time', async () => {
  const node = await startListingNode({ listing: () => ids(5_000).map(loadedEntry) });
  closers.push(() => node.close());
  const { gateway, lines } = await gatewayFor(node);

  // Three whole polls: the third listing has been served, so the first two polls are finished.
  await untilEvent(() => node.polls() >= 4, [on(gateway.registry.events, 'node:discovery')], 'four listings');
  const perPoll = node.propsPerPoll().slice(0, 3);
  assert.ok(
    perPoll.every((n) => n <= 64),
    `per-model /props per poll: ${perPoll.join(', ')}`,
  );
  assert.ok(
    perPoll.every((n) => n > 0),
    `every poll asks some models: ${perPoll.join(', ')}`,
  );
  assert.ok(node.maxPropsInFlight() <= 4, `at most 4 in flight, saw ${node.maxPropsInFlight()}`);

  const listed = (await httpJson('GET', `${gateway.url}/v1/models`)).json<{ data: { id: string }[] }>().data;
  assert.equal(listed.length, 1024, 'the listing is cut to max_models_per_node');
  assert.ok((await metric(gateway.url, 'gateway_discovery_limited_total', { node: 'router', limit: 'too_many_models' })) >= 3);
  const limitedLogs = lines.filter((l) => l.msg === 'model listing limited: entries ignored' && l.node === 'router');
  assert.equal(limitedLogs.length, 1, 'logged once, not once per poll');
  assert.equal(limitedLogs[0]?.dropped, 5_000 - 1024);
});

test('every loaded model is asked in turn over later polls, ids past the length limit never', async () => {
  const long = 'x'.repeat(300);
  const node = await startListingNode({ listing: () => [...ids(200), long].map(loadedEntry) });
  closers.push(() => node.close());
  const { gateway } = await gatewayFor(node, 'capacity_requests_per_poll = 50\nmax_model_id_bytes = 256');
  await untilEvent(
    () => node.askedIds().size >= 200,
    [on(gateway.registry.events, 'node:discovery')],
    'every loaded model asked',
  );
  assert.ok(!node.askedIds().has(long), 'an over-long id is never asked for');
  assert.ok(
    node.propsPerPoll().every((n) => n <= 50),
    node.propsPerPoll().join(', '),
  );
});
