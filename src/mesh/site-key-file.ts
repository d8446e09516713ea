// The site key file: one Ed25519 private key in PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----"), as
// node:crypto and `openssl genpkey -algorithm ed25519` write it. The same key is the site's libp2p
// identity (peer id) and the signer of its records and forwarded requests. `switchyard keygen`
// writes it with mode 0600 and never overwrites an existing file (a lost key means re-pinning the
// site everywhere, so replacing one must be a deliberate act). Loading refuses a key file that its
// group or other users may read or write (any of the mode bits 0077), as ssh refuses such a private
// key: whoever reads it can speak for the site (`keyFileModeProblem`, pure).

import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { open, writeFile } from 'node:fs/promises';
import { privateKeyFromRaw } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import type { MeshSitePin } from '#src/mesh/config/mesh-config.ts';
import type { SiteKey } from './site-key.ts';

export { pinnedKeys, pinnedPublicKey } from './pinned-key.ts';

/** A PEM Ed25519 key is about 120 bytes; anything far larger is not a key file. */
const MAX_KEY_FILE_BYTES = 16 * 1024;

/** The @libp2p/crypto private key of the same Ed25519 key (for libp2p's `privateKey` option). */
export function libp2pPrivateKey(key: SiteKey) {
  const seed = privateKeyJwkPart(key.privateKey, 'd');
  const libp2pKey = privateKeyFromRaw(Buffer.concat([seed, key.publicKeyRaw]));
  if (libp2pKey.type !== 'Ed25519') throw new Error(`site key: libp2p read the key as ${libp2pKey.type}, not Ed25519`);
  return libp2pKey;
}

/** When the config pins this site itself, the pin must be this key: a mismatch means other sites pinned a key it does not hold. */
export function ownPinProblem(site: string, sites: readonly MeshSitePin[], key: SiteKey): string | undefined {
  const own = sites.find((pin) => pin.id === site);
  if (own === undefined || own.publicKey === key.publicKey) return undefined;
  return `[[mesh.sites]] pins site "${site}" (this site) with public key ${own.publicKey}, but key_file holds ${key.publicKey}; the other sites will reject this site's records`;
}

/** Mode bits that let the file's group or other users read, write or run it. */
const GROUP_OR_OTHER = 0o077;

/** Pure: why a key file with this `st_mode` must not be used (undefined when only its owner has access). */
export function keyFileModeProblem(path: string, mode: number): string | undefined {
  if ((mode & GROUP_OR_OTHER) === 0) return undefined;
  const octal = (mode & 0o7777).toString(8).padStart(4, '0');
  const who = [(mode & 0o070) !== 0 ? 'its group' : undefined, (mode & 0o007) !== 0 ? 'other users' : undefined]
    .filter((w) => w !== undefined)
    .join(' and ');
  return `site key file ${path}: mode ${octal} lets ${who} use the site key (whoever reads it can sign as this site); run chmod 600 ${path}`;
}

/** Reads and checks a key file; the error says which file and what is wrong, never the key itself. */
export async function loadSiteKey(path: string): Promise<SiteKey> {
  const text = await readBounded(path);
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: text, format: 'pem' });
  } catch {
    throw new Error(
      `site key file ${path}: not a PEM private key (expected PKCS#8 "-----BEGIN PRIVATE KEY-----", as written by switchyard keygen)`,
    );
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') {
    throw new Error(
      `site key file ${path}: holds a ${privateKey.asymmetricKeyType ?? 'unknown'} key; a site key must be Ed25519 (switchyard keygen --out FILE writes one)`,
    );
  }
  return siteKeyFromPrivateKey(privateKey);
}

/** Writes a new key to `path` (mode 0600); refuses when the file exists. */
export async function generateSiteKeyFile(path: string): Promise<SiteKey> {
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' });
  try {
    await writeFile(path, pem, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if (isErrno(error, 'EEXIST'))
      throw new Error(
        `${path} already exists; a site key is never overwritten (move it away first if you mean to replace it, then re-pin the new key at every site)`,
      );
    throw new Error(`cannot write ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return siteKeyFromPrivateKey(privateKey);
}

/** A fresh key held only in memory (tests, and tools that write the key elsewhere). */
export function newSiteKey(): SiteKey {
  return siteKeyFromPrivateKey(generateKeyPairSync('ed25519').privateKey);
}

/** The SiteKey of an Ed25519 private KeyObject. */
export function siteKeyFromPrivateKey(privateKey: KeyObject): SiteKey {
  if (privateKey.asymmetricKeyType !== 'ed25519' || privateKey.type !== 'private')
    throw new Error('site key: must be an Ed25519 private key');
  const publicKeyRaw = new Uint8Array(privateKeyJwkPart(privateKey, 'x'));
  const publicKey = Buffer.from(publicKeyRaw).toString('base64url');
  const partial = { publicKeyRaw, publicKey, privateKey, peerId: '' };
  const peerId = peerIdFromPrivateKey(libp2pPrivateKey(partial)).toString();
  return Object.freeze({ ...partial, peerId });
}

function privateKeyJwkPart(privateKey: KeyObject, part: 'd' | 'x'): Buffer {
  const jwk = privateKey.export({ format: 'jwk' });
  const value = jwk[part];
  if (typeof value !== 'string') throw new Error(`site key: the Ed25519 key has no "${part}" component`);
  return Buffer.from(value, 'base64url');
}

async function readBounded(path: string): Promise<string> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw new Error(
      `site key file ${path}: cannot read it (${isErrno(error, 'ENOENT') ? 'no such file; create one with switchyard keygen --out FILE' : error instanceof Error ? error.message : String(error)})`,
    );
  }
  try {
    // The mode of the file opened (fstat), not of the path, so a swap after the check cannot pass it.
    const problem = keyFileModeProblem(path, (await handle.stat()).mode);
    if (problem !== undefined) throw new Error(problem);
    const buffer = Buffer.alloc(MAX_KEY_FILE_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > MAX_KEY_FILE_BYTES)
      throw new Error(`site key file ${path}: larger than ${MAX_KEY_FILE_BYTES} bytes; not a key file`);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && 'code' in error && error.code === code;
}
