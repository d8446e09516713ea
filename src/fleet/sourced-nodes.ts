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
