import { HangupRelay } from '#src/cli/hangups.ts';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runCheckConfig } from '#src/cli/check-config.ts';
import type { CliIo } from '#src/cli/io.ts';

interface Captured {
  readonly io: CliIo;
  stdout(): string;
  stderr(): string;
}

function captureIo(env: Record<string, string | undefined> = {}): Captured {
  const collect = (chunks: string[]) =>
    new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        chunks.push(chunk.toString());
        callback();
      },
    });
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { stdout: collect(out), stderr: collect(err), env, signal: new AbortController().signal, hangups: new HangupRelay(0) },
    stdout: () => out.join(''),
    stderr: () => err.join(''),
  };
}

const fixture = (name: string): string => new URL(`../../fixtures/configs/${name}`, import.meta.url).pathname;
const example = new URL('../../../examples/switchyard.toml', import.meta.url).pathname;

describe('runCheckConfig', () => {
  test('prints a summary and returns 0 for a valid file', async () => {
    const captured = captureIo();
    assert.equal(await runCheckConfig([example], captured.io), 0);
    const out = captured.stdout();
    assert.equal(captured.stderr(), '');
    assert.match(out, /is valid/);
    assert.match(out, /listen: 127\.0\.0\.1:8080/);
    assert.match(out, /nodes \(3\):/);
    assert.match(out, /gpu-a {2}vllm {2}http:\/\/10\.0\.0\.5:8000/);
    assert.match(out, /big-box {2}sglang {2}http:\/\/10\.0\.0\.7:30000 {2}\(group big-gpu\)/);
    assert.match(out, /models: default llama-3\.1-8b; 2 declared:/);
    assert.match(out, /llama-3\.1-8b {2}\(aliases llama3, default-chat\)/);
    assert.match(out, /health: every 5s, timeout 2s, dead after 3 failed probes/);
    assert.match(out, /discovery: every 10s, timeout 5s, max body 4MiB, miss wait 0s, miss cooldown 2s/);
    assert.match(out, /upstream: connect timeout 5s, headers timeout 5m, body idle timeout 5m, first-token deadline 2m,/);
  });

  test('prints every problem and a count to stderr and returns 1', async () => {
    const captured = captureIo();
    const file = fixture('three-mistakes.toml');
    assert.equal(await runCheckConfig([file], captured.io), 1);
    const lines = captured.stderr().trimEnd().split('\n');
    assert.equal(lines.length, 4);
    assert.ok(lines.some((line) => line.startsWith('server.listen: ')));
    assert.ok(lines.some((line) => line.startsWith('health.interval: ')));
    assert.ok(lines.some((line) => line.startsWith('nodes[0].url: ')));
    assert.equal(lines[3], `3 problems in ${file}`);
    assert.equal(captured.stdout(), '');
  });

  test('says "1 problem" for a single problem', async () => {
    const captured = captureIo();
    assert.equal(await runCheckConfig(['/nonexistent/switchyard.toml'], captured.io), 1);
    assert.match(captured.stderr(), /cannot read config file/);
    assert.match(captured.stderr(), /\n1 problem in \/nonexistent\/switchyard\.toml\n$/);
  });

  test('never prints an api key, on success or on failure', async () => {
    const secret = 'sk-fixture-secret-0123456789';
    const ok = captureIo();
    assert.equal(await runCheckConfig([fixture('literal-api-key.toml')], ok.io), 0);
    assert.match(ok.stdout(), /secured {2}openai {2}https:\/\/llm\.example\.internal {2}\(group cloud, api key set\)/);
    const bad = captureIo();
    assert.equal(await runCheckConfig([fixture('literal-api-key-invalid.toml')], bad.io), 1);
    for (const output of [ok.stdout(), ok.stderr(), bad.stdout(), bad.stderr()]) assert.ok(!output.includes(secret));
  });

  test('resolves env: api keys from the io environment, not from process.env', async () => {
    const file = fixture('env-api-key.toml');
    const withKey = captureIo({ SWITCHYARD_FIXTURE_KEY: 'sk-env-secret' });
    assert.equal(await runCheckConfig([`--config=${file}`], withKey.io), 0);
    assert.match(withKey.stdout(), /from-env {2}auto {2}http:\/\/127\.0\.0\.1:8000 {2}\(api key set\)/);
    assert.ok(!withKey.stdout().includes('sk-env-secret'));
    const withoutKey = captureIo({});
    assert.equal(await runCheckConfig(['--config', file], withoutKey.io), 1);
    assert.match(withoutKey.stderr(), /^nodes\[0\]\.api_key: environment variable SWITCHYARD_FIXTURE_KEY is not set$/m);
  });

  const usageCases: readonly (readonly [string, readonly string[]])[] = [
    ['no arguments', []],
    ['two files', ['a.toml', 'b.toml']],
    ['--config without a value', ['--config']],
    ['an unknown flag', ['--verbose', 'a.toml']],
  ];
  for (const [situation, argv] of usageCases) {
    test(`prints usage to stderr and returns 2 given ${situation}`, async () => {
      const captured = captureIo();
      assert.equal(await runCheckConfig(argv, captured.io), 2);
      assert.match(captured.stderr(), /usage: switchyard check-config FILE/);
    });
  }

  test('prints usage to stdout and returns 0 for --help', async () => {
    const captured = captureIo();
    assert.equal(await runCheckConfig(['--help'], captured.io), 0);
    assert.match(captured.stdout(), /usage: switchyard check-config FILE/);
  });

  test('summarises [mesh], or says the gateway runs alone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchyard-check-'));
    try {
      const path = join(dir, 'mesh.toml');
      await writeFile(
        path,
        '[[nodes]]\nname = "a"\nurl = "http://10.0.0.5:8000"\n[mesh]\nsite = "paris"\nurl = "http://10.0.0.1:8080"\nkey_file = "k"\nlisten = ["/ip4/0.0.0.0/tcp/4001"]\n' +
          '[[mesh.sites]]\nid = "berlin"\npublic_key = "Ia2fS8Q1u9W3kGv3x0m8wWn3dbtC2o0uVYh3q8p3GkA"\n',
      );
      const captured = captureIo();
      assert.equal(await runCheckConfig([path], captured.io), 0, captured.stderr());
      assert.match(
        captured.stdout(),
        /mesh: site paris at http:\/\/10\.0\.0\.1:8080, 0 bootstrap peers, 1 pinned site \(berlin\), heartbeat 5s, fresh for 15s/,
      );
      const alone = captureIo();
      assert.equal(await runCheckConfig([example], alone.io), 0);
      assert.match(alone.stdout(), /mesh: none \(this gateway runs alone\)/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
