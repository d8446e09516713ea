// Pure: the highest revision accepted from each pinned site, as kept across restarts in the mesh
// state file (`<key_file>.state.json`, revision-state-file.ts does the I/O). Each entry names the
// key it was accepted under: a site re-keyed since starts over, as a reload would.
//   {"v":1,"sites":{"b":{"key":"<base64url public key>","revision":123}}}

import { z } from 'zod';
import type { MeshSitePin } from '#src/mesh/config/mesh-config.ts';

export interface HeldRevision {
  readonly key: string;
  readonly revision: number;
}

export type HeldRevisions = ReadonlyMap<string, HeldRevision>;

/** A state file is small: one entry per pinned site. Larger is not ours. */
export const MAX_STATE_BYTES = 1024 * 1024;

const stateShape = z.object({
  v: z.literal(1),
  sites: z.record(
    z.string().max(64),
    z.object({ key: z.string().max(64), revision: z.int().min(0).max(Number.MAX_SAFE_INTEGER) }),
  ),
});

export type ParsedState =
  { readonly ok: true; readonly revisions: HeldRevisions } | { readonly ok: false; readonly problem: string };

export function parseRevisionState(text: string): ParsedState {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'not JSON' };
  }
  const parsed = stateShape.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, problem: `${issue?.path.join('.') || 'the file'}: ${issue?.message ?? 'unexpected shape'}` };
  }
  return { ok: true, revisions: new Map(Object.entries(parsed.data.sites)) };
}

export function serializeRevisionState(revisions: HeldRevisions): string {
  const sites = Object.fromEntries([...revisions].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return `${JSON.stringify({ v: 1, sites })}\n`;
}

/** The held revisions that still apply: a site still pinned with the same key. */
export function applicableRevisions(held: HeldRevisions, pins: readonly MeshSitePin[]): Map<string, number> {
  const keys = new Map(pins.map((p) => [p.id, p.publicKey]));
  return new Map([...held].flatMap(([site, h]) => (keys.get(site) === h.key ? [[site, h.revision] as const] : [])));
}
