import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairFromSeed, publicKeyFromRaw } from '@libp2p/crypto/keys';
import { peerIdFromPublicKey } from '@libp2p/peer-id';
import {
  generateSiteKeyFile,
  keyFileModeProblem,
  libp2pPrivateKey,
  loadSiteKey,
  newSiteKey,
  ownPinProblem,
  pinnedKeys,
  pinnedPublicKey,
} from '#src/mesh/site-key-file.ts';

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-key-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('a generated key file is mode 0600, loads back as the same key, and is never overwritten', () =>
  withDir(async (dir) => {
    const path = join(dir, 'site.key');
    const made = await generateSiteKeyFile(path);
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    const loaded = await loadSiteKey(path);
    assert.equal(loaded.publicKey, made.publicKey);
    assert.equal(loaded.peerId, made.peerId);
    assert.equal(loaded.publicKeyRaw.length, 32);
    assert.match(loaded.publicKey, /^[A-Za-z0-9_-]{43}$/);
    await assert.rejects(generateSiteKeyFile(path), /already exists; a site key is never overwritten/);
    assert.equal((await loadSiteKey(path)).publicKey, made.publicKey, 'the refused write left the file alone');
  }));

test('the peer id is the one libp2p derives from the same key, and the libp2p key signs like node:crypto', () =>
  withDir(async (dir) => {
    const key = await generateSiteKeyFile(join(dir, 'k'));
    assert.equal(peerIdFromPublicKey(publicKeyFromRaw(key.publicKeyRaw)).toString(), key.peerId);
    const seed = Buffer.from(key.privateKey.export({ format: 'jwk' }).d ?? '', 'base64url');
    const fromSeed = await generateKeyPairFromSeed('Ed25519', seed);
    assert.deepEqual(fromSeed.publicKey.raw, key.publicKeyRaw);
    const libp2pKey = libp2pPrivateKey(key);
    assert.equal(libp2pKey.type, 'Ed25519');
    assert.deepEqual(libp2pKey.publicKey.raw, key.publicKeyRaw);
    const message = new TextEncoder().encode('hello');
    const libp2pSig = await libp2pKey.sign(message);
    assert.ok(
      verify(null, message, pinnedPublicKey(key.publicKey), libp2pSig),
      'a libp2p signature verifies with the pinned key',
    );
    assert.ok(await libp2pKey.publicKey.verify(message, sign(null, message, key.privateKey)));
  }));

test('loading says clearly what is wrong with a key file', () =>
  withDir(async (dir) => {
    const rsa = String(generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const ec = String(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const cases: readonly { name: string; content: string | undefined; error: RegExp }[] = [
      { name: 'missing', content: undefined, error: /cannot read it \(no such file; create one with switchyard keygen/ },
      { name: 'empty', content: '', error: /not a PEM private key/ },
      { name: 'garbage', content: 'hello\n', error: /not a PEM private key/ },
      { name: 'rsa', content: rsa, error: /holds a rsa key; a site key must be Ed25519/ },
      { name: 'ec', content: ec, error: /holds a ec key; a site key must be Ed25519/ },
      { name: 'huge', content: 'x'.repeat(20_000), error: /larger than 16384 bytes/ },
    ];
    for (const { name, content, error } of cases) {
      const path = join(dir, name);
      if (content !== undefined) await writeFile(path, content, { mode: 0o600 });
      await assert.rejects(loadSiteKey(path), (thrown: Error) => {
        assert.match(thrown.message, error, name);
        assert.ok(thrown.message.includes(path), `${name}: names the file`);
        assert.ok(!thrown.message.includes('PRIVATE KEY-----\nM'), `${name}: never quotes the key`);
        return true;
      });
    }
  }));

test('a pinned public key decodes to a verifying KeyObject, and a bad one throws naming the problem', async () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x ?? '', 'base64url');
  const pinned = pinnedPublicKey(raw.toString('base64url'));
  const data = Buffer.from('x');
  assert.ok(verify(null, data, pinned, sign(null, data, privateKey)));
  for (const bad of [
    '',
    'abc',
    `${raw.toString('base64url')}=`,
    raw.toString('base64'),
    raw.toString('hex'),
    `${raw.toString('base64url').slice(0, 42)}B`,
  ]) {
    assert.throws(
      () => pinnedPublicKey(bad),
      /pinned public key (must be a raw 32-byte Ed25519 public key|does not decode to exactly 32 bytes)/,
      JSON.stringify(bad),
    );
  }
});

test('pinned keys are built per site, and a site pinning itself with another key is named', () => {
  const mine = newSiteKey();
  const theirs = newSiteKey();
  const pins = pinnedKeys([
    { id: 'paris', publicKey: mine.publicKey },
    { id: 'berlin', publicKey: theirs.publicKey },
  ]);
  assert.deepEqual([...pins.keys()], ['paris', 'berlin']);
  const data = Buffer.from('x');
  assert.ok(verify(null, data, pins.get('berlin') ?? assert.fail(), sign(null, data, theirs.privateKey)));
  assert.equal(ownPinProblem('paris', [{ id: 'paris', publicKey: mine.publicKey }], mine), undefined);
  assert.equal(
    ownPinProblem('paris', [{ id: 'berlin', publicKey: theirs.publicKey }], mine),
    undefined,
    'not pinning itself is fine',
  );
  assert.match(
    ownPinProblem('paris', [{ id: 'paris', publicKey: theirs.publicKey }], mine) ?? '',
    /pins site "paris" \(this site\) with public key .* but key_file holds/,
  );
});

test('keyFileModeProblem: only the owner may have access to a key file, as ssh requires (table)', () => {
  const table: { mode: number; problem: RegExp | undefined }[] = [
    { mode: 0o100600, problem: undefined },
    { mode: 0o100400, problem: undefined },
    { mode: 0o100700, problem: undefined },
    { mode: 0o100644, problem: /mode 0644 lets its group and other users use the site key/ },
    { mode: 0o100640, problem: /mode 0640 lets its group use the site key/ },
    { mode: 0o100604, problem: /mode 0604 lets other users use the site key/ },
    { mode: 0o100602, problem: /mode 0602 lets other users/ },
    { mode: 0o100660, problem: /mode 0660 lets its group use/ },
  ];
  for (const { mode, problem } of table) {
    const found = keyFileModeProblem('/etc/switchyard/site.key', mode);
    if (problem === undefined) assert.equal(found, undefined, mode.toString(8));
    else {
      assert.match(found ?? '', problem, mode.toString(8));
      assert.match(found ?? '', /^site key file \/etc\/switchyard\/site\.key: .*; run chmod 600 \/etc\/switchyard\/site\.key$/);
    }
  }
});

test('a key file others may read is refused with its mode and the fix; chmod 600 makes it load', () =>
  withDir(async (dir) => {
    const path = join(dir, 'site.key');
    const key = newSiteKey();
    await writeFile(path, key.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    await chmod(path, 0o644);
    await assert.rejects(loadSiteKey(path), (thrown: Error) => {
      assert.equal(
        thrown.message,
        `site key file ${path}: mode 0644 lets its group and other users use the site key (whoever reads it can sign as this site); run chmod 600 ${path}`,
      );
      return true;
    });
    await chmod(path, 0o600);
    assert.equal((await loadSiteKey(path)).publicKey, key.publicKey);
  }));
