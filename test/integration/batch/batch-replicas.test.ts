// Issue 44, replicas: two [cluster] replicas on a real redis-server share one batch directory
// ([batch] shared_dir). Replica A (its own process) holds the runner lease and runs a job created
// through it; replica B (in this process) answers the API for the same job and sends none of its
// lines. A is killed (SIGKILL) with lines in flight — sent, their answers never kept —; B takes
// the lease over once A's key expires, sends those lines again marked retried, and completes the
// job: every custom_id once in the output, and the node saw each line at most twice (exactly the
// lines A left in flight twice).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { startRedisServer, type RedisServer } from '#test/fixtures/redis-server.ts';
import { clusterTable } from '#test/fixtures/cluster-replicas.ts';
import { gatewayToml, startGatewayProcess, type GatewayProcess } from '#test/fixtures/processes.ts';
import { startGateway, type GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import { answerChat, startScriptedNode, type ScriptedNode } from '#test/fixtures/scripted-node.ts';
import { tempStateDir, type TempStateDir } from '#test/fixtures/state-dirs.ts';
import { eventually } from '#test/fixtures/http.ts';
import { chatLine, fileLines, pollUntil, upload } from './batch-fixture.ts';

const LINES = 60;
const TTL = '1500ms';
const PREFIX = `batch-replicas-${process.pid}:`;

let redis: RedisServer | undefined;
let node: ScriptedNode | undefined;
let a: GatewayProcess | undefined;
let b: GatewayUnderTest | undefined;
const dirs: TempStateDir[] = [];

after(async () => {
  await a?.process.stop('SIGKILL');
  await b?.close();
  await node?.close();
  await redis?.stop();
  for (const dir of dirs) dir.remove();
});

/** What the node saw: each line's sightings (by its content), and the requests it holds unanswered. */
const seen = new Map<string, number>();
const held: { readonly res: ServerResponse; readonly content: string }[] = [];
let holding = false;

function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.split(' ')[1]);
}

test('a replica killed mid-job: another takes the job over, nothing lost or doubled', { timeout: 600_000 }, async (t) => {
  redis = await startRedisServer();
  node = await startScriptedNode((_req, res, body) => {
    const content = String((JSON.parse(body.toString('utf8')) as { messages: { content: string }[] }).messages[0]?.content);
    seen.set(content, (seen.get(content) ?? 0) + 1);
    if (holding) held.push({ res, content });
    else setTimeout(() => answerChat(res, `answer to ${content}`), 20);
  });
  const shared = tempStateDir();
  dirs.push(shared);
  const toml = (replica: string): string => {
    const own = tempStateDir();
    dirs.push(own);
    return gatewayToml(
      [{ name: 'n', url: node?.url ?? '', kind: 'vllm' }],
      `${clusterTable(redis?.url ?? '', replica, PREFIX, TTL)}\n[batch]\nshared_dir = "${shared.dir}"\n`,
      `state_dir = "${own.dir}"\ndrain_timeout = "1s"`,
    );
  };
  a = await startGatewayProcess(toml('a'));
  await eventually(
    () => a!.logs().some((l) => l.lease === 'batch' && l.leading === true),
    60_000,
    'replica a holding the batch lease',
  );
  b = await startGateway(toml('b'), { logLevel: 'info' });
  const client = (url: string): OpenAI => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'none', maxRetries: 0, timeout: 60_000 });

  // A job created through A; B answers for it too (the records are shared).
  const file = await upload(
    client(a.url),
    Array.from({ length: LINES }, (_, i) => chatLine(`r${i}`, 'm', `line ${i}`)),
  );
  const created = await client(a.url).batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  await eventually(
    async () => ((await client(b!.url).batches.retrieve(created.id)).request_counts?.completed ?? 0) >= 15,
    240_000,
    'a first part of the job done, read through b',
  );
  // While A holds the lease, B runs nothing.
  assert.equal(metric(await b.metrics(), 'gateway_batch_lines_sent'), 0, 'replica b sent no line while a held the lease');
  assert.equal(
    b.logs().some((l) => l.lease === 'batch' && l.leading === true),
    false,
  );

  // Lines in flight at A, then A dies: their answers are never kept.
  holding = true;
  // ...once every line the node did answer is kept (read through b): only the held ones are left sent.
  const answered = (): number => [...seen.values()].reduce((sum, n) => sum + n, 0) - held.length;
  await eventually(
    async () =>
      held.length >= 1 && ((await client(b!.url).batches.retrieve(created.id)).request_counts?.completed ?? 0) === answered(),
    60_000,
    'lines of a in flight at the node, and every answered line kept',
  );
  await a.process.stop('SIGKILL');
  const inFlight = new Set(held.map((h) => h.content));
  const killedAt = Date.now();
  a = undefined;
  // Nothing A sent is answered any more; from now on the node answers.
  const stuck = held.length;
  for (const h of held.splice(0)) h.res.destroy();
  holding = false;

  await eventually(
    () => b!.logs().some((l) => l.lease === 'batch' && l.leading === true),
    60_000,
    'replica b taking the lease over',
  );
  const tookMs = Date.now() - killedAt;
  const done = await pollUntil(client(b.url), created.id, ['completed', 'failed', 'expired', 'cancelled'], 480_000);
  assert.equal(done.status, 'completed');
  assert.deepEqual(done.request_counts, { total: LINES, completed: LINES, failed: 0 });

  const output = await fileLines(client(b.url), done.output_file_id);
  assert.deepEqual(
    output.map((l) => l.custom_id).sort(),
    Array.from({ length: LINES }, (_, i) => `r${i}`).sort(),
    'every custom_id once',
  );
  for (const line of output) assert.equal(line.response?.status_code, 200, line.custom_id);

  // The node saw each line at most twice: twice exactly the lines A held in flight when it died.
  assert.equal(seen.size, LINES);
  assert.ok(
    [...seen.values()].every((n) => n >= 1 && n <= 2),
    JSON.stringify([...seen]),
  );
  const twice = [...seen.entries()].filter(([, n]) => n === 2).map(([content]) => content);
  assert.equal(twice.length, stuck, `lines seen twice (${twice.join(', ')}) are the ${stuck} held at the kill`);
  for (const content of twice) assert.ok(inFlight.has(content), `${content} was in flight at the kill`);
  // ...and marked retried by the replica that took them over.
  const retried = b.logs().find((l) => typeof l.msg === 'string' && l.msg.includes('marked retried'));
  assert.equal(retried?.lines, stuck, JSON.stringify(retried));
  t.diagnostic(`replica b took the job over ${tookMs} ms after the kill (lease_ttl ${TTL}); ${stuck} lines sent again`);
});

test('[batch] shared_dir without [cluster] fails the start, saying why', async () => {
  const own = tempStateDir();
  const shared = tempStateDir();
  dirs.push(own, shared);
  const toml = gatewayToml(
    [{ name: 'n', url: 'http://127.0.0.1:9', kind: 'vllm' }],
    `[batch]\nshared_dir = "${shared.dir}"\n`,
    `state_dir = "${own.dir}"`,
  );
  await assert.rejects(
    async () => (await startGateway(toml, { logLevel: 'info' })).close(),
    (error: unknown) => /batch\.shared_dir: is shared by the replicas of a \[cluster\]/.test(String(error)),
  );
});
