import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readFile } from 'node:fs/promises';
import { formatProblems } from '#src/config/load.ts';
import { loadConfig } from '#src/config-tables.ts';
import type { ConfigProblem, GatewayConfig } from '#src/config/types.ts';
import { meshChangedLive } from '#src/mesh/config/mesh-table.ts';
import { restartOnlyChanges } from '#src/config-tables.ts';

const NODE = '[[nodes]]\nname = "gpu-a"\nurl = "http://10.0.0.5:8000"\n';
const KEY_A = 'Ia2fS8Q1u9W3kGv3x0m8wWn3dbtC2o0uVYh3q8p3GkA';
const KEY_B = 'qPZq5Jx0bJkDqV2W3r5ZB7m8W0n1q2s3t4u5v6w7x8A';
const PEER = '/ip4/10.0.0.7/tcp/4001/p2p/12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA';
const RELAY = '12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA';
const BASE =
  'site = "paris"\nurl = "http://10.0.0.1:8080/"\nkey_file = "/etc/switchyard/site.key"\nlisten = ["/ip4/0.0.0.0/tcp/4001"]\n';

function load(mesh: string): ReturnType<typeof loadConfig> {
  return loadConfig(`${NODE}[mesh]\n${mesh}`, {});
}

function loaded(mesh: string): GatewayConfig {
  const result = load(mesh);
  assert.ok(result.ok, result.ok ? '' : formatProblems(result.problems));
  return result.config;
}

function problems(mesh: string): readonly ConfigProblem[] {
  const result = load(mesh);
  assert.ok(!result.ok, 'expected problems, but the config loaded');
  return result.problems;
}

describe('[mesh] config', () => {
  test('without [mesh] the config has no mesh at all', () => {
    const result = loadConfig(NODE, {});
    assert.ok(result.ok);
    assert.equal('mesh' in result.config, false);
  });

  test('the required keys with every default filled', () => {
    assert.deepEqual(loaded(BASE).mesh, {
      site: 'paris',
      url: 'http://10.0.0.1:8080',
      keyFile: '/etc/switchyard/site.key',
      listen: ['/ip4/0.0.0.0/tcp/4001'],
      peers: [],
      allowedPeers: [],
      maxPeerMessagesPerSecond: 200,
      heartbeatMs: 5_000,
      freshnessMs: 15_000,
      maxModelsPerSite: 256,
      maxClockSkewMs: 30_000,
      maxRememberedForwards: 65_536,
      maxMessageBytes: 262_144,
      staticModels: [],
      sites: [],
    });
  });

  test('every key set', () => {
    const mesh = loaded(
      `${BASE}peers = ["${PEER}"]\nheartbeat = "2s"\nmax_models_per_site = 10\nmax_clock_skew = "5s"\nmax_message_bytes = "64KiB"\n` +
        'static_models = [{ id = "bert", ctx = 512 }, { id = "tts" }]\n' +
        `[[mesh.sites]]\nid = "paris"\npublic_key = "${KEY_A}"\n[[mesh.sites]]\nid = "berlin"\npublic_key = "${KEY_B}"\n`,
    ).mesh;
    assert.ok(mesh);
    assert.deepEqual(mesh.peers, [PEER]);
    assert.deepEqual(loaded(`${BASE}allowed_peers = ["${RELAY}"]\nmax_peer_messages_per_second = 50\n`).mesh?.allowedPeers, [
      RELAY,
    ]);
    assert.equal(
      loaded(`${BASE}peer_key_file = "/etc/switchyard/replica-1.key"\n`).mesh?.peerKeyFile,
      '/etc/switchyard/replica-1.key',
      "a replica's own libp2p identity",
    );
    assert.equal('peerKeyFile' in (loaded(BASE).mesh ?? {}), false, 'absent: the site key is the libp2p identity');
    assert.equal(loaded(`${BASE}max_peer_messages_per_second = 50\n`).mesh?.maxPeerMessagesPerSecond, 50);
    assert.equal(mesh.heartbeatMs, 2_000);
    assert.equal(mesh.freshnessMs, 6_000, 'freshness follows heartbeat when not set');
    assert.equal(mesh.maxModelsPerSite, 10);
    assert.equal(mesh.maxClockSkewMs, 5_000);
    assert.equal(mesh.maxMessageBytes, 65_536);
    assert.equal(loaded(`${BASE}max_remembered_forwards = 1024\n`).mesh?.maxRememberedForwards, 1_024);
    assert.deepEqual(mesh.staticModels, [{ id: 'bert', ctx: 512 }, { id: 'tts' }]);
    assert.deepEqual(mesh.sites, [
      { id: 'paris', publicKey: KEY_A },
      { id: 'berlin', publicKey: KEY_B },
    ]);
    assert.equal(loaded(`${BASE}heartbeat = "1s"\nfreshness = "1500ms"\n`).mesh?.freshnessMs, 1_500);
  });

  const BAD: readonly { name: string; mesh: string; path: string; fragment: string }[] = [
    { name: 'missing site', mesh: BASE.replace('site = "paris"\n', ''), path: 'mesh.site', fragment: 'is required' },
    { name: 'missing url', mesh: BASE.replace(/url = .*\n/, ''), path: 'mesh.url', fragment: 'is required' },
    { name: 'missing key_file', mesh: BASE.replace(/key_file = .*\n/, ''), path: 'mesh.key_file', fragment: 'is required' },
    { name: 'missing listen', mesh: BASE.replace(/listen = .*\n/, ''), path: 'mesh.listen', fragment: 'is required' },
    {
      name: 'site with a space',
      mesh: BASE.replace('"paris"', '"par is"'),
      path: 'mesh.site',
      fragment: 'must be 1 to 64 characters',
    },
    {
      name: 'site with a newline',
      mesh: BASE.replace('"paris"', '"par\\nis"'),
      path: 'mesh.site',
      fragment: 'must be 1 to 64 characters',
    },
    {
      name: 'site too long',
      mesh: BASE.replace('"paris"', `"${'p'.repeat(65)}"`),
      path: 'mesh.site',
      fragment: 'must be 1 to 64 characters',
    },
    {
      name: 'url not http',
      mesh: BASE.replace('http://10.0.0.1:8080/', 'ftp://10.0.0.1'),
      path: 'mesh.url',
      fragment: 'must be an http(s) URL',
    },
    {
      name: 'url not a URL',
      mesh: BASE.replace('http://10.0.0.1:8080/', 'paris:8080'),
      path: 'mesh.url',
      fragment: 'must be an http(s) URL',
    },
    {
      name: 'empty key_file',
      mesh: BASE.replace('"/etc/switchyard/site.key"', '""'),
      path: 'mesh.key_file',
      fragment: 'switchyard keygen',
    },
    {
      name: 'empty peer_key_file',
      mesh: `${BASE}peer_key_file = ""\n`,
      path: 'mesh.peer_key_file',
      fragment: 'switchyard keygen',
    },
    {
      name: 'empty listen',
      mesh: BASE.replace('["/ip4/0.0.0.0/tcp/4001"]', '[]'),
      path: 'mesh.listen',
      fragment: 'at least one multiaddr',
    },
    {
      name: 'listen not a multiaddr',
      mesh: BASE.replace('/ip4/0.0.0.0/tcp/4001', '0.0.0.0:4001'),
      path: 'mesh.listen[0]',
      fragment: 'is not a multiaddr',
    },
    {
      name: 'listen not TCP',
      mesh: BASE.replace('/ip4/0.0.0.0/tcp/4001', '/ip4/0.0.0.0/udp/4001'),
      path: 'mesh.listen[0]',
      fragment: 'must be a TCP multiaddr',
    },
    {
      name: 'peer without /p2p',
      mesh: `${BASE}peers = ["/ip4/10.0.0.7/tcp/4001"]\n`,
      path: 'mesh.peers[0]',
      fragment: 'must end in /p2p/<peer id>',
    },
    {
      name: 'peer with a bad ip',
      mesh: `${BASE}peers = ["/ip4/999.0.0.7/tcp/4001/p2p/12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA"]\n`,
      path: 'mesh.peers[0]',
      fragment: 'is not a multiaddr',
    },
    {
      name: 'peer id not a peer id',
      mesh: `${BASE}peers = ["/ip4/10.0.0.7/tcp/4001/p2p/notapeer"]\n`,
      path: 'mesh.peers[0]',
      fragment: 'not a peer id',
    },
    {
      name: 'peer id of an RSA key',
      mesh: `${BASE}peers = ["/ip4/10.0.0.7/tcp/4001/p2p/QmcgpsyWgH8Y8ajJz1Cu72KnS5uo2Aa2LpzU7kinSupNKC"]\n`,
      path: 'mesh.peers[0]',
      fragment: 'Ed25519 peer id',
    },
    { name: 'peers not an array', mesh: `${BASE}peers = "${PEER}"\n`, path: 'mesh.peers', fragment: 'must be an array' },
    {
      name: 'allowed_peers not an array',
      mesh: `${BASE}allowed_peers = "${RELAY}"\n`,
      path: 'mesh.allowed_peers',
      fragment: 'must be an array of peer ids',
    },
    {
      name: 'an allowed peer that is not a peer id',
      mesh: `${BASE}allowed_peers = ["${RELAY}", "relay-1"]\n`,
      path: 'mesh.allowed_peers[1]',
      fragment: 'must be a libp2p peer id',
    },
    {
      name: 'an allowed peer written as an address',
      mesh: `${BASE}allowed_peers = ["${PEER}"]\n`,
      path: 'mesh.allowed_peers[0]',
      fragment: 'a /p2p/ address belongs in [mesh] peers',
    },
    {
      name: 'an allowed peer listed twice',
      mesh: `${BASE}allowed_peers = ["${RELAY}", "${RELAY}"]\n`,
      path: 'mesh.allowed_peers[1]',
      fragment: 'is listed twice',
    },
    {
      name: 'zero messages per peer',
      mesh: `${BASE}max_peer_messages_per_second = 0\n`,
      path: 'mesh.max_peer_messages_per_second',
      fragment: 'whole number of at least 1',
    },
    {
      name: 'a fractional message rate',
      mesh: `${BASE}max_peer_messages_per_second = 2.5\n`,
      path: 'mesh.max_peer_messages_per_second',
      fragment: 'whole number of at least 1',
    },
    {
      name: 'an unbounded message rate',
      mesh: `${BASE}max_peer_messages_per_second = 1000000\n`,
      path: 'mesh.max_peer_messages_per_second',
      fragment: 'at most 100000',
    },
    {
      name: 'freshness equal to heartbeat',
      mesh: `${BASE}heartbeat = "5s"\nfreshness = "5s"\n`,
      path: 'mesh.freshness',
      fragment: 'must be longer than heartbeat',
    },
    {
      name: 'freshness under heartbeat',
      mesh: `${BASE}heartbeat = "10s"\nfreshness = "5s"\n`,
      path: 'mesh.freshness',
      fragment: 'must be longer than heartbeat',
    },
    { name: 'zero heartbeat', mesh: `${BASE}heartbeat = "0s"\n`, path: 'mesh.heartbeat', fragment: 'must be longer than 0s' },
    {
      name: 'zero cap',
      mesh: `${BASE}max_models_per_site = 0\n`,
      path: 'mesh.max_models_per_site',
      fragment: 'whole number of at least 1',
    },
    {
      name: 'no replay memory',
      mesh: `${BASE}max_remembered_forwards = 0\n`,
      path: 'mesh.max_remembered_forwards',
      fragment: 'whole number of at least 1',
    },
    {
      name: 'tiny messages',
      mesh: `${BASE}max_message_bytes = "1KiB"\n`,
      path: 'mesh.max_message_bytes',
      fragment: 'at least 4KiB',
    },
    {
      name: 'huge messages',
      mesh: `${BASE}max_message_bytes = "8MiB"\n`,
      path: 'mesh.max_message_bytes',
      fragment: 'at most 1024KiB',
    },
    {
      name: 'unknown key',
      mesh: `${BASE}gossip_interval = "5s"\n`,
      path: 'mesh.gossip_interval',
      fragment: 'unknown key; expected one of: site, url',
    },
    {
      name: 'static model without id',
      mesh: `${BASE}static_models = [{ ctx = 5 }]\n`,
      path: 'mesh.static_models[0].id',
      fragment: 'is required',
    },
    {
      name: 'static model ctx 0',
      mesh: `${BASE}static_models = [{ id = "m", ctx = 0 }]\n`,
      path: 'mesh.static_models[0].ctx',
      fragment: 'at least 1',
    },
    {
      name: 'static model twice',
      mesh: `${BASE}static_models = [{ id = "m" }, { id = "m" }]\n`,
      path: 'mesh.static_models[1].id',
      fragment: 'listed twice',
    },
    {
      name: 'pin short key',
      mesh: `${BASE}[[mesh.sites]]\nid = "b"\npublic_key = "abc"\n`,
      path: 'mesh.sites[0].public_key',
      fragment: 'raw 32-byte Ed25519 public key',
    },
    {
      name: 'pin padded key',
      mesh: `${BASE}[[mesh.sites]]\nid = "b"\npublic_key = "${KEY_A}="\n`,
      path: 'mesh.sites[0].public_key',
      fragment: 'raw 32-byte Ed25519 public key',
    },
    {
      name: 'pin non-canonical key',
      mesh: `${BASE}[[mesh.sites]]\nid = "b"\npublic_key = "${KEY_A.slice(0, 42)}B"\n`,
      path: 'mesh.sites[0].public_key',
      fragment: 'not canonical',
    },
    {
      name: 'pin without key',
      mesh: `${BASE}[[mesh.sites]]\nid = "b"\n`,
      path: 'mesh.sites[0].public_key',
      fragment: 'is required',
    },
    {
      name: 'pin with a bad id',
      mesh: `${BASE}[[mesh.sites]]\nid = "b c"\npublic_key = "${KEY_A}"\n`,
      path: 'mesh.sites[0].id',
      fragment: 'must be 1 to 64 characters',
    },
    {
      name: 'pin unknown key',
      mesh: `${BASE}[[mesh.sites]]\nid = "b"\npublic_key = "${KEY_A}"\nnote = "x"\n`,
      path: 'mesh.sites[0].note',
      fragment: 'unknown key',
    },
    {
      name: 'site pinned twice',
      mesh: `${BASE}[[mesh.sites]]\nid = "b"\npublic_key = "${KEY_A}"\n[[mesh.sites]]\nid = "b"\npublic_key = "${KEY_B}"\n`,
      path: 'mesh.sites[1].id',
      fragment: 'site "b" is pinned twice',
    },
    {
      name: 'one key for two sites',
      mesh: `${BASE}[[mesh.sites]]\nid = "b"\npublic_key = "${KEY_A}"\n[[mesh.sites]]\nid = "c"\npublic_key = "${KEY_A}"\n`,
      path: 'mesh.sites[1].public_key',
      fragment: 'the same key is pinned for two sites',
    },
    { name: 'sites as a table', mesh: `${BASE}sites = { id = "b" }\n`, path: 'mesh.sites', fragment: 'must be an array' },
  ];
  for (const { name, mesh, path, fragment } of BAD) {
    test(`rejects ${name}, naming ${path}`, () => {
      const found = problems(mesh);
      assert.ok(
        found.some((problem) => problem.path === path && problem.message.includes(fragment)),
        `no problem at "${path}" containing "${fragment}" in:\n${formatProblems(found)}`,
      );
    });
  }

  test('a bad pinned key is never echoed back', () => {
    const secretish = 'sk-live-0123456789abcdef0123456789abcdef0123';
    const found = problems(`${BASE}[[mesh.sites]]\nid = "b"\npublic_key = "${secretish}"\n`);
    assert.ok(!formatProblems(found).includes(secretish));
  });

  test('[mesh] as a value rather than a table is one clear problem', () => {
    const result = loadConfig(`mesh = "on"\n${NODE}`, {});
    assert.ok(!result.ok);
    assert.deepEqual(
      result.problems.map((problem) => problem.path),
      ['mesh'],
    );
  });
});

describe('[mesh] on reload', () => {
  const PIN_A = `[[mesh.sites]]\nid = "a"\npublic_key = "${KEY_A}"\n`;
  const before = `${BASE}${PIN_A}`;
  const CASES: readonly { name: string; next: string | undefined; live: boolean; restart: readonly string[] }[] = [
    { name: 'nothing', next: before, live: false, restart: [] },
    { name: 'a pin added', next: `${before}[[mesh.sites]]\nid = "b"\npublic_key = "${KEY_B}"\n`, live: true, restart: [] },
    { name: 'a pin removed', next: BASE, live: true, restart: [] },
    { name: 'a pin re-keyed', next: `${BASE}[[mesh.sites]]\nid = "a"\npublic_key = "${KEY_B}"\n`, live: true, restart: [] },
    { name: 'the heartbeat', next: `${BASE}heartbeat = "2s"\n${PIN_A}`, live: true, restart: [] },
    { name: 'the freshness', next: `${BASE}freshness = "20s"\n${PIN_A}`, live: true, restart: [] },
    { name: 'the model cap', next: `${BASE}max_models_per_site = 9\n${PIN_A}`, live: true, restart: [] },
    { name: 'the message cap', next: `${BASE}max_message_bytes = "8KiB"\n${PIN_A}`, live: true, restart: [] },
    { name: 'the clock skew', next: `${BASE}max_clock_skew = "1s"\n${PIN_A}`, live: true, restart: [] },
    { name: 'the replay memory', next: `${BASE}max_remembered_forwards = 100\n${PIN_A}`, live: true, restart: [] },
    { name: 'the static models', next: `${BASE}static_models = [{ id = "m" }]\n${PIN_A}`, live: true, restart: [] },
    { name: 'the peers', next: `${BASE}peers = ["${PEER}"]\n${PIN_A}`, live: true, restart: [] },
    { name: 'the allowed peers', next: `${BASE}allowed_peers = ["${RELAY}"]\n${PIN_A}`, live: true, restart: [] },
    { name: 'the message rate per peer', next: `${BASE}max_peer_messages_per_second = 20\n${PIN_A}`, live: true, restart: [] },
    { name: 'the site id', next: `${BASE.replace('"paris"', '"lyon"')}${PIN_A}`, live: false, restart: ['mesh.site'] },
    { name: 'the url', next: `${BASE.replace('10.0.0.1', '10.0.0.2')}${PIN_A}`, live: false, restart: ['mesh.url'] },
    { name: 'the key file', next: `${BASE.replace('site.key', 'other.key')}${PIN_A}`, live: false, restart: ['mesh.key_file'] },
    {
      name: 'the peer key file',
      next: `${BASE}peer_key_file = "/etc/switchyard/replica-2.key"\n${PIN_A}`,
      live: false,
      restart: ['mesh.peer_key_file'],
    },
    {
      name: 'the listen addresses',
      next: `${BASE.replace('tcp/4001', 'tcp/4002')}${PIN_A}`,
      live: false,
      restart: ['mesh.listen'],
    },
    { name: 'the whole table removed', next: undefined, live: false, restart: ['mesh'] },
  ];
  for (const { name, next, live, restart } of CASES) {
    test(`a change of ${name} is ${live ? 'applied live' : restart.length === 0 ? 'no change' : 'restart-only'}`, () => {
      const old = loaded(before);
      const nextConfig = next === undefined ? (loadConfig(NODE, {}) as { ok: true; config: GatewayConfig }).config : loaded(next);
      assert.equal(meshChangedLive(old, nextConfig), live);
      assert.deepEqual(restartOnlyChanges(old, nextConfig), restart);
    });
  }

  test('adding [mesh] to a gateway running alone needs a restart', () => {
    const alone = loadConfig(NODE, {});
    assert.ok(alone.ok);
    assert.deepEqual(restartOnlyChanges(alone.config, loaded(BASE)), ['mesh']);
    assert.equal(meshChangedLive(alone.config, loaded(BASE)), false);
  });
});

test('examples/mesh-site.toml loads: one site, two pins, a bootstrap peer', async () => {
  const text = await readFile(new URL('../../../../examples/mesh-site.toml', import.meta.url), 'utf8');
  const result = loadConfig(text, {}, 'examples/mesh-site.toml');
  assert.ok(result.ok, result.ok ? '' : formatProblems(result.problems));
  assert.equal(result.config.mesh?.site, 'paris');
  assert.deepEqual(
    result.config.mesh?.sites.map((pin) => pin.id),
    ['paris', 'berlin'],
  );
  assert.equal(result.config.mesh?.peers.length, 1);
});

test('[mesh] loads with more than one request worker (each worker gets the mesh link)', () => {
  for (const workers of ['1', '2', '"auto"']) {
    const result = loadConfig(`[server]\nworkers = ${workers}\n${NODE}[mesh]\n${BASE}`, {});
    assert.ok(result.ok, result.ok ? '' : formatProblems(result.problems));
    assert.equal(result.config.mesh?.site, 'paris');
  }
});

test('[[mesh.sites]] url is optional, normalised when given, and checked like [mesh] url', () => {
  const pins = `[[mesh.sites]]\nid = "berlin"\npublic_key = "${KEY_B}"\nurl = "http://10.0.0.2:8080/"\n[[mesh.sites]]\nid = "rome"\npublic_key = "${KEY_A}"\n`;
  const result = loadConfig(`${NODE}[mesh]\n${BASE}${pins}`, {});
  assert.ok(result.ok, result.ok ? '' : formatProblems(result.problems));
  assert.deepEqual(result.config.mesh?.sites, [
    { id: 'berlin', publicKey: KEY_B, url: 'http://10.0.0.2:8080' },
    { id: 'rome', publicKey: KEY_A },
  ]);
  const bad = loadConfig(`${NODE}[mesh]\n${BASE}[[mesh.sites]]\nid = "berlin"\npublic_key = "${KEY_B}"\nurl = "ftp://x"\n`, {});
  assert.ok(!bad.ok);
  assert.deepEqual(
    bad.problems.map((p) => p.path),
    ['mesh.sites[0].url'],
  );
});
