// Issue 45: the dashboard's Fleet view names each node's source, in real Chromium: a [[nodes]] entry
// is `static`, a pod found through a Kubernetes source (the API server stand-in, through the official
// client) carries its source's name; a pod that turns ready appears with it, live.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromiumPath, launchChromium, PAGE_TIMEOUT_MS, type Browser, skipWithoutChromium } from '#test/fixtures/browser.ts';
import { startInProcessGateway, type InProcessGateway } from '#test/fixtures/in-process.ts';
import { startK8sApi, type K8sApiStandIn } from '#test/fixtures/k8s-api-server.ts';

const CHROMIUM = chromiumPath();
const SKIP = skipWithoutChromium();

let browser: Browser | undefined;
let gw: InProcessGateway | undefined;
let api: K8sApiStandIn | undefined;

const pods = (names: string[]) => ({
  name: 'vllm-abc12',
  service: 'vllm',
  ports: [{ name: 'http', port: 9 }],
  endpoints: names.map((pod, i) => ({ ip: `127.0.0.${i + 2}`, pod })),
});

before(async () => {
  if (CHROMIUM === undefined) return;
  api = await startK8sApi();
  api.apply(pods(['vllm-0']));
  gw = await startInProcessGateway(
    `[server]
listen = "127.0.0.1:0"

[[nodes]]
name = "gpu-1"
url = "http://127.0.0.1:9"
kind = "vllm"

[[node_sources]]
kind = "kubernetes"
name = "k8s"
namespace = "models"
service = "vllm"
node_kind = "vllm"
kubeconfig = "${await api.kubeconfig()}"
`,
    { logLevel: 'warn' },
  );
  browser = await launchChromium(CHROMIUM);
});

after(async () => {
  await browser?.close();
  await gw?.close();
  await api?.close();
});

test('the Fleet view names each node’s source, and a pod that arrives shows with its source', { skip: SKIP }, async () => {
  assert.ok(browser && gw && api);
  const page = await browser.context.newPage();
  page.setDefaultTimeout(PAGE_TIMEOUT_MS);
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(`${gw.url}/admin/`);
  await page.locator('#feed-status[data-state="live"]').waitFor();
  await page.locator('#fleet th', { hasText: 'source' }).waitFor();
  const source = (node: string) => page.locator(`#fleet tr[data-node="${node}"] td.source`);
  await source('k8s-vllm-0').waitFor();
  assert.equal(await source('gpu-1').innerText(), 'static');
  assert.equal(await source('k8s-vllm-0').innerText(), 'k8s');
  api.apply(pods(['vllm-0', 'vllm-1']));
  await source('k8s-vllm-1').waitFor();
  assert.equal(await source('k8s-vllm-1').innerText(), 'k8s');
  assert.deepEqual(problems, []);
});
