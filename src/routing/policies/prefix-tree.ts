// An approximate radix tree of the prompt prefixes recently sent to each node: one tree shared by
// all nodes, each vertex remembering which nodes ("tenants") were sent a prompt through it. It is
// the gateway's own estimate of what each node's prefix cache holds (no backend cooperation).
// Memory is bounded: past `maxChars` stored characters, least recently used leaves are evicted.

interface Vertex {
  /** The characters on the edge from the parent to this vertex ("" for the root). */
  edge: string;
  parent: Vertex | undefined;
  readonly children: Map<string, Vertex>;
  /** Tenant → when it was last sent a prompt through this vertex (a logical tick). */
  readonly tenants: Map<string, number>;
}

const newVertex = (edge: string, parent: Vertex | undefined): Vertex => ({ edge, parent, children: new Map(), tenants: new Map() });

function commonLength(a: string, aFrom: number, b: string): number {
  let n = 0;
  while (n < b.length && aFrom + n < a.length && a.charCodeAt(aFrom + n) === b.charCodeAt(n)) n += 1;
  return n;
}

export class PrefixTree {
  readonly #root = newVertex('', undefined);
  readonly #maxChars: number;
  #chars = 0;
  #tick = 0;
  /** Leaves, least recently used first (a Map keeps insertion order; a touch re-inserts). */
  readonly #leaves = new Map<Vertex, true>();

  constructor(maxChars: number) {
    this.#maxChars = maxChars;
  }

  /** Characters stored on edges: the memory bound's measure. */
  get size(): number {
    return this.#chars;
  }

  /** Per tenant, the longest prefix of `text` it was sent (characters); tenants with none are absent. */
  match(text: string): Map<string, number> {
    const matched = new Map<string, number>();
    let vertex = this.#root;
    let depth = 0;
    for (;;) {
      const child = vertex.children.get(text.charAt(depth));
      if (child === undefined || depth >= text.length) break;
      const common = commonLength(text, depth, child.edge);
      depth += common;
      for (const tenant of child.tenants.keys()) matched.set(tenant, depth);
      if (common < child.edge.length) break;
      vertex = child;
    }
    return matched;
  }

  /** Records that `text` was sent to `tenant`, then evicts past the memory bound. */
  insert(text: string, tenant: string): void {
    this.#tick += 1;
    let vertex = this.#root;
    let depth = 0;
    while (depth < text.length) {
      const child = vertex.children.get(text.charAt(depth));
      if (child === undefined) {
        const leaf = newVertex(text.slice(depth), vertex);
        vertex.children.set(leaf.edge.charAt(0), leaf);
        this.#chars += leaf.edge.length;
        this.#leaves.delete(vertex);
        vertex = leaf;
        depth = text.length;
        vertex.tenants.set(tenant, this.#tick);
        break;
      }
      const common = commonLength(text, depth, child.edge);
      const next = common < child.edge.length ? this.#split(child, common) : child;
      next.tenants.set(tenant, this.#tick);
      vertex = next;
      depth += common;
    }
    if (vertex.children.size === 0 && vertex !== this.#root) {
      this.#leaves.delete(vertex);
      this.#leaves.set(vertex, true);
    }
    while (this.#chars > this.#maxChars) this.#evictOne();
  }

  /** Splits `child`'s edge after `at` characters; returns the new upper vertex. */
  #split(child: Vertex, at: number): Vertex {
    const parent = child.parent as Vertex;
    const upper = newVertex(child.edge.slice(0, at), parent);
    for (const [tenant, tick] of child.tenants) upper.tenants.set(tenant, tick);
    parent.children.set(upper.edge.charAt(0), upper);
    child.edge = child.edge.slice(at);
    child.parent = upper;
    upper.children.set(child.edge.charAt(0), child);
    return upper;
  }

  #evictOne(): void {
    const oldest = this.#leaves.keys().next();
    if (oldest.done === true) return;
    const leaf = oldest.value;
    this.#leaves.delete(leaf);
    const parent = leaf.parent;
    if (parent === undefined) return;
    parent.children.delete(leaf.edge.charAt(0));
    this.#chars -= leaf.edge.length;
    // A parent left without children is a leaf now; it joins as the most recent (an approximation).
    if (parent.children.size === 0 && parent !== this.#root) this.#leaves.set(parent, true);
  }
}
