// Pure: which names are nearest to one the client typed, so a 404 can say "did you mean". Names are
// compared by their core first — without the `org/` or `namespace/` in front and the `:tag` behind
// (`llama3.2` is nearest `llama3.2:1b`, `Llama-3-8B` nearest `meta-llama/Llama-3-8B`, however long
// their decorations) — then whole, by edit distance (insertions, deletions, substitutions). Case is
// ignored: `Llama-3` is one step from nothing but a typo away from `llama-3`.

/** Characters of a typed name that ranking reads: a name can be as long as a request body. */
export const MAX_COMPARED_CHARS = 256;

/** Levenshtein distance between `a` and `b`, case-insensitive; two rows, O(|a|·|b|) time. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const current = [i];
    for (let j = 1; j <= t.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (s[i - 1] === t[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[t.length] ?? 0;
}

/** A model name without what is in front of its last `/` and what follows its tag's `:`. */
export function coreName(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const colon = base.indexOf(':');
  return colon === -1 ? base : base.slice(0, colon);
}

/**
 * Up to `limit` distinct names nearest to `wanted`, nearest first: by core distance, then whole
 * distance, then in alphabetical order.
 */
export function closestNames(wanted: string, names: Iterable<string>, limit: number): string[] {
  const typed = wanted.slice(0, MAX_COMPARED_CHARS);
  const typedCore = coreName(typed);
  const ranked = [...new Set(names)].map((name) => {
    const compared = name.slice(0, MAX_COMPARED_CHARS);
    return { name, core: editDistance(typedCore, coreName(compared)), whole: editDistance(typed, compared) };
  });
  ranked.sort((x, y) => x.core - y.core || x.whole - y.whole || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  return ranked.slice(0, Math.max(0, limit)).map((r) => r.name);
}
