import { HangupRelay } from '#src/cli/hangups.ts';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import type { CliIo } from '#src/cli/io.ts';
import { runSim } from '#src/cli/sim.ts';

interface FakeIo {
  readonly io: CliIo;
  readonly abort: () => void;
  stdout(): string;
  stderr(): string;
}

function fakeIo(): FakeIo {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdout.on('data', (chunk: Buffer) => out.push(chunk.toString()));
  stderr.on('data', (chunk: Buffer) => err.push(chunk.toString()));
  const controller = new AbortController();
  return {
    io: { stdout, stderr, env: {}, signal: controller.signal, hangups: new HangupRelay(0) },
    abort: () => controller.abort(),
    stdout: () => out.join(''),
    stderr: () => err.join(''),
  };
}

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchyard-sim-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('starts the fleet, announces it as one JSON line, serves until aborted, then returns 0', async () => {
  const path = join(dir, 'fleet.toml');
  await writeFile(
    path,
    '[[node]]\nname = "v"\nkind = "vllm"\nmodels = ["m"]\n[[node]]\nname = "o"\nkind = "ollama"\nmodels = ["x"]\n',
  );
  const fake = fakeIo();
  const running = runSim(['--config', path], fake.io);
  const deadline = Date.now() + 5000;
  while (!fake.stdout().includes('\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  const lines = fake.stdout().trim().split('\n');
  assert.equal(lines.length, 1);
  const ready: unknown = JSON.parse(lines[0] ?? '');
  assert.ok(typeof ready === 'object' && ready !== null && 'nodes' in ready && Array.isArray(ready.nodes));
  assert.deepEqual(Object.keys(ready), ['event', 'nodes']);
  const [vllm, ollama] = ready.nodes as { name: string; kind: string; url: string; models: string[] }[];
  assert.deepEqual(vllm && { ...vllm, url: 'u' }, { name: 'v', kind: 'vllm', url: 'u', models: ['m'] });
  assert.deepEqual(ollama?.models, ['x:latest']);
  assert.match(vllm?.url ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
  const answer = await request(`${vllm?.url}/v1/models`, { headersTimeout: 2000, bodyTimeout: 2000 });
  assert.equal(answer.statusCode, 200);
  await answer.body.text();
  assert.match(fake.stderr(), /sim node v \(vllm\)/);
  fake.abort();
  assert.equal(await running, 0);
  await assert.rejects(request(`${vllm?.url}/v1/models`, { headersTimeout: 1000 }));
});

test('prints each config problem as "path: message" and returns 1', async () => {
  const path = join(dir, 'bad.toml');
  await writeFile(path, '[[node]]\nkind = "nope"\nmodels = ["m"]\nwhat = 1\n');
  const fake = fakeIo();
  assert.equal(await runSim(['--config', path], fake.io), 1);
  assert.equal(fake.stdout(), '');
  const lines = fake.stderr().trim().split('\n');
  assert.ok(
    lines.some((l) => l.startsWith('node[0].kind: ')),
    fake.stderr(),
  );
  assert.ok(lines.includes('node[0].what: unknown key'), fake.stderr());
});

test('returns 1 when the file cannot be read and 2 without --config', async () => {
  const missing = fakeIo();
  assert.equal(await runSim(['--config', join(dir, 'missing.toml')], missing.io), 1);
  assert.match(missing.stderr(), /cannot read/);
  const usage = fakeIo();
  assert.equal(await runSim([], usage.io), 2);
  assert.match(usage.stderr(), /usage: switchyard sim --config FILE/);
});
