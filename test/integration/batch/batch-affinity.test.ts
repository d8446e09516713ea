// Issue 44: batch lines are "routed like any request (model, context fit, affinity by job)". A
// job's lines carry its id as their session (line-sender.ts), so the routing's session layer keeps
// them on one node — its KV cache holds the prefix they share — while that node has room, even
// under a policy that would spread them (round-robin); when that node is full (its slots taken)
// the lines spread to the others. The runner's secret never reaches a node; the job's session does.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { simRequests } from '#test/fixtures/http.ts';
import { waitForHost } from '#test/fixtures/context.ts';
import { startRecordingUpstream, type RecordingUpstream } from '#test/fixtures/recording-upstream.ts';
import { tempStateDir, type TempStateDir } from '#test/fixtures/state-dirs.ts';
import { chatLine, pollUntil, upload } from './batch-fixture.ts';

const NODES = ['a', 'b', 'c'];
const node = (name: string, slots: number, ttft: string): string =>
  `[[node]]\nname = "${name}"\nkind = "llamacpp"\nmodels = ["m"]\nslots = ${slots}\nttft = "${ttft}"\ntokens_per_second = 1000\n`;

interface Fleet {
  readonly sim: SimFleet;
  readonly gw: GatewayUnderTest;
  readonly state: TempStateDir;
  close(): Promise<void>;
}

async function startFleet(nodes: string, names: readonly string[], slots: number, extra: string): Promise<Fleet> {
  const state = tempStateDir();
  const sim = await startSimFleet(nodes);
  const gw = await startGateway(
    gatewayToml(
      names.map((name) => ({ name, url: sim.url(name), kind: 'llamacpp' })),
      extra,
      `state_dir = "${state.dir}"`,
    ),
  );
  for (const name of names) await waitForHost(gw, name, (h) => h.models?.m?.slots === slots, `${name}'s slots known`);
  return {
    sim,
    gw,
    state,
    close: async () => {
      await gw.close();
      await sim.close();
      state.remove();
    },
  };
}

/** How many of the job's lines (their content says the tag) each node got. */
async function linesPerNode(fleet: Fleet, names: readonly string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const name of names)
    counts[name] = (await simRequests(fleet.sim.url(name))).filter(
      (r) => r.method === 'POST' && r.path === '/v1/chat/completions',
    ).length;
  return counts;
}

async function runJob(fleet: Fleet, tag: string, lines: number): Promise<void> {
  const client = new OpenAI({ baseURL: `${fleet.gw.url}/v1`, apiKey: 'none', maxRetries: 0, timeout: 60_000 });
  const file = await upload(
    client,
    Array.from({ length: lines }, (_, i) => chatLine(`${tag}${i}`, 'm', `the shared instructions, then item ${i}`)),
  );
  const batch = await client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  const done = await pollUntil(client, batch.id, ['completed', 'failed', 'expired', 'cancelled']);
  assert.equal(done.status, 'completed');
  assert.deepEqual(done.request_counts, { total: lines, completed: lines, failed: 0 });
}

let spread: Fleet;
let full: Fleet;
let recorder: RecordingUpstream;

before(async () => {
  // Round-robin would send one line to each node in turn; one line in flight at a time, so the job's node always has room.
  spread = await startFleet(
    NODES.map((n) => node(n, 4, '2ms')).join('\n'),
    NODES,
    4,
    '[routing]\npolicy = "round-robin"\n[batch]\nmax_in_flight = 1',
  );
  // Two nodes of two slots, lines slow enough to hold their slots: the batch fills four at once.
  full = await startFleet(['a', 'b'].map((n) => node(n, 2, '400ms')).join('\n'), ['a', 'b'], 2, '');
  recorder = await startRecordingUpstream(['m']);
});

after(async () => {
  await spread?.close();
  await full?.close();
  await recorder?.close();
});

test('the lines of one job go to one node while it has room, under a policy that would spread them', async () => {
  await runJob(spread, 'j', 12);
  const counts = await linesPerNode(spread, NODES);
  assert.deepEqual(Object.values(counts).sort(), [0, 0, 12], `all 12 lines on one node: ${JSON.stringify(counts)}`);
});

test('when the job’s node is full, its lines spread to the other node', async () => {
  await runJob(full, 'f', 8);
  const counts = await linesPerNode(full, ['a', 'b']);
  assert.equal((counts.a ?? 0) + (counts.b ?? 0), 8);
  assert.ok((counts.a ?? 0) > 0 && (counts.b ?? 0) > 0, `both nodes ran lines once one was full: ${JSON.stringify(counts)}`);
});

test('a line reaches its node with its job as its session, and without the runner’s secret', async () => {
  const state = tempStateDir();
  const gw = await startGateway(
    gatewayToml([{ name: 'rec', url: recorder.url, kind: 'vllm' }], '', `state_dir = "${state.dir}"`),
  );
  try {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'none', maxRetries: 0, timeout: 60_000 });
    const file = await upload(client, [chatLine('x1', 'm', 'one'), chatLine('x2', 'm', 'two')]);
    const batch = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const done = await pollUntil(client, batch.id, ['completed', 'failed', 'expired', 'cancelled']);
    assert.equal(done.status, 'completed');
    const heads = recorder.heads.filter((h) => h.target === '/v1/chat/completions');
    assert.equal(heads.length, 2);
    for (const head of heads) {
      assert.equal(head.headers['x-switchyard-batch-secret'], undefined, 'the secret that signs lines stays in the gateway');
      assert.equal(head.headers['x-session-affinity'], batch.id);
    }
  } finally {
    await gw.close();
    state.remove();
  }
});
