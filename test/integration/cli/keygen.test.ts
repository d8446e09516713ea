// `switchyard keygen` as an operator runs it: a real process, a real file, its mode and its output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { publicKeyFromRaw } from '@libp2p/crypto/keys';
import { peerIdFromPublicKey } from '@libp2p/peer-id';
import { loadSiteKey } from '#src/mesh/site-key-file.ts';

const CLI = new URL('../../../bin/switchyard.js', import.meta.url).pathname;

async function run(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(killer);
  return { code, stdout, stderr };
}

test('keygen writes a 0600 key file and prints its public key and peer id as one JSON line; it never overwrites', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-keygen-'));
  try {
    const path = join(dir, 'site.key');
    const first = await run(['keygen', '--out', path]);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stderr, '');
    assert.match(first.stdout, /^\{[^\n]*\}\n$/, 'exactly one line');
    const printed = JSON.parse(first.stdout) as { public_key: string; peer_id: string };
    assert.deepEqual(Object.keys(printed), ['public_key', 'peer_id']);
    assert.match(printed.public_key, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(printed.public_key, 'base64url').length, 32);
    assert.equal(peerIdFromPublicKey(publicKeyFromRaw(Buffer.from(printed.public_key, 'base64url'))).toString(), printed.peer_id);
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    const pem = await readFile(path, 'utf8');
    assert.match(pem, /^-----BEGIN PRIVATE KEY-----\n/);
    assert.ok(!first.stdout.includes(pem.split('\n')[1] ?? 'x'), 'the private key is never printed');
    const loaded = await loadSiteKey(path);
    assert.equal(loaded.publicKey, printed.public_key);
    assert.equal(loaded.peerId, printed.peer_id);

    const again = await run(['keygen', '--out', path]);
    assert.equal(again.code, 1);
    assert.equal(again.stdout, '');
    assert.match(again.stderr, /already exists; a site key is never overwritten/);
    assert.equal(await readFile(path, 'utf8'), pem, 'the key file is unchanged');

    const other = join(dir, 'notes.txt');
    await writeFile(other, 'keep me');
    assert.equal((await run(['keygen', `--out=${other}`])).code, 1);
    assert.equal(await readFile(other, 'utf8'), 'keep me');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('keygen without exactly --out FILE prints its usage and exits 2', async () => {
  for (const args of [
    ['keygen'],
    ['keygen', '--out'],
    ['keygen', 'file.key'],
    ['keygen', '--out', 'a', 'b'],
    ['keygen', '--force', '--out', 'a'],
  ]) {
    const result = await run(args);
    assert.equal(result.code, 2, args.join(' '));
    assert.match(result.stderr, /^usage: switchyard keygen --out FILE/m);
  }
});

test('keygen into a missing directory says why, exit 1', async () => {
  const result = await run(['keygen', '--out', join(tmpdir(), 'switchyard-no-such-dir', 'site.key')]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /^switchyard keygen: cannot write .*ENOENT/);
});
