// The test vector in docs/federation.md, recomputed from the code: another implementation checks
// itself against those lines, so they must be what Switchyard really produces and accepts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { judgeMessage } from '#src/mesh/acceptance.ts';
import { canonicalBytes, modelsDigest, signRecord } from '#src/mesh/record-codec.ts';
import { pinnedPublicKey, siteKeyFromPrivateKey } from '#src/mesh/site-key-file.ts';
import type { SiteRecord } from '#src/mesh/site-record.ts';

const PEM =
  '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g\n-----END PRIVATE KEY-----\n';
const decode = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

test('the documented test vector is what the code produces and accepts', async () => {
  const doc = await readFile(new URL('../../../docs/federation.md', import.meta.url), 'utf8');
  const key = siteKeyFromPrivateKey(createPrivateKey(PEM));
  const seed = Buffer.from(key.privateKey.export({ format: 'jwk' }).d ?? '', 'base64url');
  assert.deepEqual(
    [...seed],
    Array.from({ length: 32 }, (_, i) => i + 1),
  );
  assert.ok(doc.includes(PEM.trim()), 'the doc shows the key file');

  const full: SiteRecord = {
    v: 1,
    site: 'paris',
    url: 'https://paris.example.net:8443',
    revision: 1807536537600000,
    issued_at: 1765172400000,
    models: [
      { id: 'llama-3.1-8b', ctx: 131072 },
      { id: 'qwen2.5-32b', ctx: 32768, on_demand: true },
    ],
    load: { in_flight: 3, queued: 0, slots: 16 },
  };
  const digest = modelsDigest(full.models ?? []);
  const heartbeat: SiteRecord = {
    v: 1,
    site: 'paris',
    url: full.url,
    revision: full.revision + 5_120_000,
    issued_at: full.issued_at + 5_000,
    models_digest: digest,
    load: { in_flight: 1, queued: 0, slots: 16 },
  };
  const fullMessage = decode(signRecord(full, key));
  const heartbeatMessage = decode(signRecord(heartbeat, key));
  const sigOf = (message: string): string => (JSON.parse(message) as { sig: string }).sig;

  const lines = [
    `public_key: ${key.publicKey}`,
    `peer_id:    ${key.peerId}`,
    `canonical:  ${decode(canonicalBytes(full))}`,
    `sig:        ${sigOf(fullMessage)}`,
    `message:    ${fullMessage}`,
    `models_digest of that list: ${digest}`,
    `canonical:  ${decode(canonicalBytes(heartbeat))}`,
    `sig:        ${sigOf(heartbeatMessage)}`,
  ];
  for (const line of lines) assert.ok(doc.includes(`${line}\n`), `docs/federation.md lacks the line:\n${line}`);

  const ctx = {
    pins: new Map([['paris', pinnedPublicKey(key.publicKey)]]),
    nowWallMs: full.issued_at + 10_000,
    maxClockSkewMs: 30_000,
    freshnessMs: 15_000,
    maxModels: 256,
    maxBytes: 262_144,
  };
  const first = judgeMessage(new TextEncoder().encode(fullMessage), {
    ...ctx,
    highestRevision: () => undefined,
    knownModels: () => undefined,
  });
  assert.equal(first.kind, 'accepted');
  const second = judgeMessage(new TextEncoder().encode(heartbeatMessage), {
    ...ctx,
    highestRevision: () => full.revision,
    knownModels: (_site, wanted) => (wanted === digest ? full.models : undefined),
  });
  assert.deepEqual(second.kind === 'accepted' ? second.record.models : second, full.models);
});
