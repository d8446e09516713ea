// Reads of a running site for the multi-process mesh tests and the mesh bench: its /admin/sites
// document, its /v1/models listing, one counter from /metrics, and a timed wait.

import type { MeshSite } from './mesh-fleet.ts';

export interface SiteRow {
  readonly id: string;
  readonly fresh: boolean;
  readonly url?: string;
  readonly revision?: number;
  readonly age_ms?: number;
  readonly models: readonly { readonly id: string; readonly ctx?: number }[];
  readonly last_rejection?: { readonly reason: string; readonly detail: string; readonly peer: string };
}

export interface SitesDoc {
  readonly mesh: boolean;
  readonly site?: {
    readonly id: string;
    readonly revision?: number;
    readonly models: readonly { readonly id: string }[];
    readonly peers?: number;
  };
  readonly sites: readonly SiteRow[];
}

export async function sitesOf(site: MeshSite): Promise<SitesDoc> {
  const { status, body } = await site.json<SitesDoc>('/admin/sites');
  if (status !== 200) throw new Error(`${site.id} /admin/sites answered ${status}`);
  return body;
}

export async function rowOf(site: MeshSite, remote: string): Promise<SiteRow | undefined> {
  return (await sitesOf(site)).sites.find((r) => r.id === remote);
}

/** Model ids in the site's /v1/models (local and fresh remote). */
export async function listedModels(site: MeshSite): Promise<string[]> {
  const { body } = await site.json<{ data: { id: string }[] }>('/v1/models');
  return body.data.map((m) => m.id);
}

/** The value of one sample in Prometheus text (0 when absent). `labels` like 'reason="replay"'. */
export function metricValue(text: string, name: string, labels = ''): number {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const [series, value] = line.split(' ');
    if (series === undefined || value === undefined) continue;
    if (series === name && labels === '') return Number(value);
    if (series.startsWith(`${name}{`) && (labels === '' || series.includes(labels))) return Number(value);
  }
  return 0;
}

/** The sum of every sample of a metric, whatever its labels. */
export function metricSum(text: string, name: string): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.split(' ')[1]), 0);
}

/** Polls `check` every `pollMs` until it holds; returns the ms it took; throws after `timeoutMs`. */
export async function waitFor(
  check: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs = 10_000,
  pollMs = 25,
): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (await check()) return performance.now() - start;
    if (performance.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

export async function chat(
  site: MeshSite,
  model: string,
  content: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  return site.json('/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }], max_tokens: 4 }),
  });
}
