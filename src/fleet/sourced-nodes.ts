// Pure: what every source does with its node lists: keep them in one order, and tell a real change.

import type { SourcedNode } from './node-source.ts';

/** By name (a source's list is kept in this order, whatever order its answer came in). */
export function byName(a: SourcedNode, b: SourcedNode): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Whether two lists are the same node set (same names and URLs, in order). */
export function sameNodes(a: readonly SourcedNode[], b: readonly SourcedNode[]): boolean {
  return a.length === b.length && a.every((node, i) => node.name === b[i]?.name && node.url === b[i]?.url);
}

/** What one change of a source's set did, node by node: names it gained, names it lost, names whose URL moved. */
export interface NodeSetChange {
  readonly added: number;
  readonly removed: number;
  readonly moved: number;
}

export const CHANGE_KINDS = ['added', 'removed', 'moved'] as const;

export function nodeSetChange(before: readonly SourcedNode[], after: readonly SourcedNode[]): NodeSetChange {
  const was = new Map(before.map((node) => [node.name, node.url]));
  const is = new Map(after.map((node) => [node.name, node.url]));
  let added = 0;
  let moved = 0;
  for (const [name, url] of is) {
    const old = was.get(name);
    if (old === undefined) added += 1;
    else if (old !== url) moved += 1;
  }
  const removed = [...was.keys()].filter((name) => !is.has(name)).length;
  return { added, removed, moved };
}
