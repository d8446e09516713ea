// An approximate radix tree of the prompt prefixes recently sent to each node: one tree shared by
// all nodes, each vertex remembering which nodes ("tenants") were sent a prompt through it. It is
// the gateway's own estimate of what each node's prefix cache holds (no backend cooperation).
//
// Memory is bounded by what the tree holds, not only by its characters: each vertex and each tenant
// entry is charged its memory in characters' worth (VERTEX_COST, TENANT_COST), so prompts that branch
// at every character (millions of tiny distinct prompts) fill the bound as surely as long ones do.
// Past the bound the least recently used leaves are evicted, and a vertex left with one child and
// the same tenants is merged into it. Edges own their characters (never a view into a whole prompt).

/**
 * A vertex's own memory in characters' worth, about its bytes: the object with its LRU links, its
 * tenants array, its entry in the parent's children map, an edge string's header (~200 bytes
 * measured with prompts that branch at every character; docs/config.md, cache_max_tree_chars).
 */
export const VERTEX_COST = 192;
/** One more tenant on a vertex (an array slot; the name itself is shared). */
export const TENANT_COST = 16;

interface Vertex {
  /** The characters on the edge from the parent to this vertex ("" for the root). */
  edge: string;
  parent: Vertex | undefined;
  /** By first character of their edge; absent while the vertex is a leaf. */
  children: Map<string, Vertex> | undefined;
  /** The nodes sent a prompt through this vertex, each once (a handful: one small array). */
  tenants: string[];
  /** Links in the leaves' LRU list (undefined when not a leaf, or at the list's ends). */
  older: Vertex | undefined;
  newer: Vertex | undefined;
  inLeaves: boolean;
}

const newVertex = (edge: string, parent: Vertex | undefined): Vertex => ({
  edge,
  parent,
  children: undefined,
  tenants: [],
  older: undefined,
  newer: undefined,
  inLeaves: false,
});

function commonLength(a: string, aFrom: number, b: string): number {
  let n = 0;
  while (n < b.length && aFrom + n < a.length && a.charCodeAt(aFrom + n) === b.charCodeAt(n)) n += 1;
  return n;
}

/**
 * A copy of `text` that holds only its own characters. V8's slice of 13 or more characters is a
 * view that keeps the whole sliced string alive: a 5-character edge would hold its 8,192-character
 * prompt, and the bound would count 5. structuredClone makes a flat copy (one- or two-byte, as it was).
 */
function own(text: string): string {
  return text.length < 13 ? text : structuredClone(text);
}

function addTenant(vertex: Vertex, tenant: string): number {
  if (vertex.tenants.includes(tenant)) return 0;
  // A fresh array of the exact size: push would leave room for 16 more.
  vertex.tenants = [...vertex.tenants, tenant];
  return TENANT_COST;
}

function vertexCost(vertex: Vertex): number {
  return vertex.edge.length + VERTEX_COST + TENANT_COST * vertex.tenants.length;
}

export class PrefixTree {
  readonly #root = newVertex('', undefined);
  readonly #maxCost: number;
  #cost = 0;
  #vertices = 0;
  /** The leaves' LRU list: least recently used at `#oldest`. */
  #oldest: Vertex | undefined;
  #newest: Vertex | undefined;

  /** `maxCost`: characters stored plus each vertex's and tenant entry's cost (VERTEX_COST, TENANT_COST). */
  constructor(maxCost: number) {
    this.#maxCost = maxCost;
  }

  /** What the tree holds, in characters' worth (edges plus vertex and tenant costs): the bound's measure. */
  get size(): number {
    return this.#cost;
  }

  /** Vertices held, the root left out. */
  get vertices(): number {
    return this.#vertices;
  }

  /** Per tenant, the longest prefix of `text` it was sent (characters); tenants with none are absent. */
  match(text: string): Map<string, number> {
    const matched = new Map<string, number>();
    let vertex = this.#root;
    let depth = 0;
    while (depth < text.length) {
      const child = vertex.children?.get(text.charAt(depth));
      if (child === undefined) break;
      const common = commonLength(text, depth, child.edge);
      depth += common;
      for (const tenant of child.tenants) matched.set(tenant, depth);
      if (common < child.edge.length) break;
      vertex = child;
    }
    return matched;
  }

  /** Records that `text` was sent to `tenant`, then evicts past the memory bound. */
  insert(text: string, tenant: string): void {
    let vertex = this.#root;
    let depth = 0;
    while (depth < text.length) {
      const child = vertex.children?.get(text.charAt(depth));
      if (child === undefined) {
        const leaf = newVertex(own(text.slice(depth)), vertex);
        leaf.tenants = [tenant];
        (vertex.children ??= new Map()).set(leaf.edge.charAt(0), leaf);
        this.#unlinkLeaf(vertex);
        this.#cost += vertexCost(leaf);
        this.#vertices += 1;
        vertex = leaf;
        break;
      }
      const common = commonLength(text, depth, child.edge);
      const next = common < child.edge.length ? this.#split(child, common) : child;
      this.#cost += addTenant(next, tenant);
      vertex = next;
      depth += common;
    }
    if (vertex !== this.#root && vertex.children === undefined) this.#touchLeaf(vertex);
    while (this.#cost > this.#maxCost && this.#oldest !== undefined) this.#evictOldest();
  }

  /** Splits `child`'s edge after `at` characters; returns the new upper vertex. */
  #split(child: Vertex, at: number): Vertex {
    const parent = child.parent as Vertex;
    const upper = newVertex(own(child.edge.slice(0, at)), parent);
    upper.tenants = [...child.tenants];
    (parent.children as Map<string, Vertex>).set(upper.edge.charAt(0), upper);
    child.edge = own(child.edge.slice(at));
    child.parent = upper;
    upper.children = new Map([[child.edge.charAt(0), child]]);
    this.#cost += VERTEX_COST + TENANT_COST * upper.tenants.length;
    this.#vertices += 1;
    return upper;
  }

  #evictOldest(): void {
    const leaf = this.#oldest;
    if (leaf === undefined) return;
    this.#unlinkLeaf(leaf);
    const parent = leaf.parent;
    if (parent === undefined) return;
    const siblings = parent.children as Map<string, Vertex>;
    siblings.delete(leaf.edge.charAt(0));
    this.#cost -= vertexCost(leaf);
    this.#vertices -= 1;
    if (parent === this.#root) return;
    // A parent left without children is a leaf now; it joins as the most recent (an approximation).
    if (siblings.size === 0) {
      parent.children = undefined;
      this.#touchLeaf(parent);
      return;
    }
    if (siblings.size === 1) this.#mergeWithOnlyChild(parent);
  }

  /**
   * A vertex with one child and the same tenants says nothing its child does not: the two become
   * one (the child takes the joined edge). With other tenants it stays: they were sent only its prefix.
   */
  #mergeWithOnlyChild(vertex: Vertex): void {
    const [child] = (vertex.children as Map<string, Vertex>).values();
    const parent = vertex.parent;
    if (child === undefined || parent === undefined || child.tenants.length !== vertex.tenants.length) return;
    if (!vertex.tenants.every((tenant) => child.tenants.includes(tenant))) return;
    child.edge = own(vertex.edge + child.edge);
    child.parent = parent;
    (parent.children as Map<string, Vertex>).set(child.edge.charAt(0), child);
    this.#cost -= VERTEX_COST + TENANT_COST * vertex.tenants.length;
    this.#vertices -= 1;
  }

  /** Makes `vertex` the most recently used leaf. */
  #touchLeaf(vertex: Vertex): void {
    this.#unlinkLeaf(vertex);
    vertex.older = this.#newest;
    vertex.newer = undefined;
    if (this.#newest !== undefined) this.#newest.newer = vertex;
    this.#newest = vertex;
    this.#oldest ??= vertex;
    vertex.inLeaves = true;
  }

  #unlinkLeaf(vertex: Vertex): void {
    if (!vertex.inLeaves) return;
    if (vertex.older === undefined) this.#oldest = vertex.newer;
    else vertex.older.newer = vertex.newer;
    if (vertex.newer === undefined) this.#newest = vertex.older;
    else vertex.newer.older = vertex.older;
    vertex.older = undefined;
    vertex.newer = undefined;
    vertex.inLeaves = false;
  }
}
