// Issue 45: the Kubernetes client library (@kubernetes/client-node, with its dependencies) and the
// source's loop load only when a kubernetes node source runs: `serve` without one and `check-config`
// with one load none of it; `serve` with one does (the control: the trace sees it). Checked by what
// a spawned process loads (an import trace), not by its memory.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadedBy, loadedByServe } from '#test/fixtures/loaded-modules.ts';
import { writeTempFile } from '#test/fixtures/processes.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';

const SOURCE = `
[[node_sources]]
kind = "kubernetes"
name = "k8s"
namespace = "models"
service = "vllm"
kubeconfig = "/nonexistent/kubeconfig"
`;

const kubernetesCode = (urls: readonly string[]): string[] =>
  urls.filter((u) => u.includes('/node_modules/@kubernetes/') || /\/src\/fleet\/k8s-(client|follower|watch|slices)/.test(u));

test(
  'serve without a kubernetes source, and check-config with one, load no Kubernetes client code',
  { timeout: 300_000 },
  async () => {
    const plain = await loadedByServe();
    assert.equal(plain.code, 0);
    assert.ok(
      plain.urls.some((u) => u.endsWith('/src/fleet/node-sources.ts')),
      'the node sources loaded',
    );
    assert.deepEqual(kubernetesCode(plain.urls), []);

    const file = await writeTempFile(
      'switchyard.toml',
      `${gatewayToml([{ name: 'a', url: 'http://127.0.0.1:1', kind: 'vllm' }])}\n${SOURCE}`,
    );
    try {
      const checked = await loadedBy(['check-config', file.path]);
      assert.equal(checked.code, 0, checked.stderr);
      assert.match(checked.stdout, /k8s {2}kubernetes EndpointSlices of models\/vllm/);
      assert.deepEqual(kubernetesCode(checked.urls), []);
    } finally {
      await file.cleanup();
    }
  },
);

test('serve with a kubernetes source loads the client when the source starts (the control)', { timeout: 300_000 }, async () => {
  const served = await loadedByServe({
    toml: SOURCE,
    until: (line) => line.includes('node source failed') && line.includes('cannot read the kubeconfig'),
  });
  assert.equal(served.code, 0);
  const loaded = kubernetesCode(served.urls);
  assert.ok(
    loaded.some((u) => u.includes('/node_modules/@kubernetes/client-node/')),
    'the official client loaded',
  );
  assert.ok(loaded.some((u) => u.endsWith('/src/fleet/k8s-client.ts')));
});
