// Pure: which names are nearest to one the client typed, by edit distance (insertions, deletions,
// substitutions), so a 404 can say "did you mean". Case is ignored: `Llama-3` is one step from
// nothing but a typo away from `llama-3`.

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

/** Up to `limit` distinct names nearest to `wanted`, nearest first, ties in alphabetical order. */
export function closestNames(wanted: string, names: Iterable<string>, limit: number): string[] {
  const ranked = [...new Set(names)].map((name) => ({ name, distance: editDistance(wanted, name) }));
  ranked.sort((x, y) => x.distance - y.distance || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  return ranked.slice(0, Math.max(0, limit)).map((r) => r.name);
}
