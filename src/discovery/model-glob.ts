// Pure: a node's model allow-list (`[[nodes]] models = ["llama-*", …]`). Patterns are model ids in
// which `*` stands for any run of characters (none included) and `?` for exactly one; everything
// else matches itself, case-sensitively. No regular expressions: a pattern from the config can
// never make matching slow (greedy match with one backtrack point, O(pattern × id) at worst).

/** Whether `id` may be served by a node with this allow-list; no list = any model. */
export function isAllowedModel(allowList: readonly string[] | undefined, id: string): boolean {
  return allowList === undefined || allowList.some((pattern) => matchesGlob(pattern, id));
}

export function matchesGlob(pattern: string, text: string): boolean {
  // Code points, so `?` stands for one character even outside the Basic Multilingual Plane.
  const glob = [...pattern];
  const chars = [...text];
  let g = 0;
  let c = 0;
  let star = -1;
  let resumeAt = 0;
  while (c < chars.length) {
    const want = glob[g];
    if (want !== undefined && want !== '*' && (want === '?' || want === chars[c])) {
      g += 1;
      c += 1;
    } else if (want === '*') {
      star = g;
      g += 1;
      resumeAt = c;
    } else if (star >= 0) {
      // Let the last `*` swallow one more character and try again from there.
      g = star + 1;
      resumeAt += 1;
      c = resumeAt;
    } else {
      return false;
    }
  }
  while (glob[g] === '*') g += 1;
  return g === glob.length;
}
