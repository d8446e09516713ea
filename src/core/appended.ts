// A list that most often holds one item, grown where it is first needed. `[item]` takes one slot;
// an empty array's first push reserves seventeen (V8 grows an array to n + n/2 + 16), which a
// per-request or per-chunk list that then holds one item pays for nothing.

/** `list` with `item` added: a list of one when there was none, else the same list pushed onto. */
export function appended<T>(list: T[] | undefined, item: T): T[] {
  if (list === undefined) return [item];
  list.push(item);
  return list;
}
