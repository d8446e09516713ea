// Cross-entry checks that a per-key schema cannot express: names that must be unique, and names
// that must refer to something declared elsewhere. Each finding points at the later entry and
// names the earlier one, so the operator sees both places.

/** A finding with its path relative to the list or table that was checked. */
export interface NameClash {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

export function findNodeNameClashes(nodes: readonly { readonly name: string }[]): NameClash[] {
  const firstIndexByName = new Map<string, number>();
  const clashes: NameClash[] = [];
  nodes.forEach((node, index) => {
    // An empty name is already reported by the schema; two of them are not news.
    if (node.name === '') return;
    const firstIndex = firstIndexByName.get(node.name);
    if (firstIndex === undefined) firstIndexByName.set(node.name, index);
    else clashes.push({ path: [index, 'name'], message: `duplicate node name "${node.name}" (also nodes[${firstIndex}])` });
  });
  return clashes;
}

interface ModelEntry {
  readonly name: string;
  readonly aliases?: readonly string[] | undefined;
}

/** Model names and aliases share one namespace: a request's `model` must mean exactly one entry. */
export function findModelNameClashes(available: readonly ModelEntry[]): NameClash[] {
  const clashes: NameClash[] = [];
  const modelIndexByName = new Map<string, number>();
  available.forEach((model, index) => {
    if (model.name === '') return;
    const firstIndex = modelIndexByName.get(model.name);
    if (firstIndex === undefined) modelIndexByName.set(model.name, index);
    else
      clashes.push({
        path: [index, 'name'],
        message: `duplicate model name "${model.name}" (also models.available[${firstIndex}])`,
      });
  });
  const aliasOwner = new Map<string, string>();
  available.forEach((model, index) => {
    (model.aliases ?? []).forEach((alias, aliasIndex) => {
      if (alias === '') return;
      const path = [index, 'aliases', aliasIndex];
      const here = `models.available[${index}].aliases[${aliasIndex}]`;
      const namedIndex = modelIndexByName.get(alias);
      if (alias === model.name) {
        clashes.push({ path, message: `alias "${alias}" repeats the model's own name` });
      } else if (namedIndex !== undefined) {
        clashes.push({ path, message: `alias "${alias}" is already the name of models.available[${namedIndex}]` });
      } else if (aliasOwner.has(alias)) {
        clashes.push({ path, message: `alias "${alias}" is already used at ${aliasOwner.get(alias)}` });
      } else {
        aliasOwner.set(alias, here);
      }
    });
  });
  return clashes;
}

/** With no declared models any default is accepted: discovery decides what exists. */
export function isDeclaredModel(model: string, available: readonly ModelEntry[]): boolean {
  return available.length === 0 || available.some((entry) => entry.name === model || (entry.aliases ?? []).includes(model));
}

/**
 * A model with a group is routed only to nodes of that group (routing/filters/same-group.ts), so a
 * group no node carries makes the model unroutable; that is almost always a typo.
 */
export function findUnservedModelGroups(
  available: readonly { readonly group?: string | undefined }[],
  nodes: readonly { readonly group?: string | undefined }[],
): NameClash[] {
  const nodeGroups = new Set(nodes.map((node) => node.group));
  return available.flatMap((model, index) =>
    model.group === undefined || nodeGroups.has(model.group)
      ? []
      : [{ path: [index, 'group'], message: `no node has group "${model.group}", so this model could never be routed` }],
  );
}

/** One finding per later repeat of a value (undefined: did not parse, never a repeat), at `[index, key]` (or `[index]`). */
export function findRepeats(
  values: readonly (string | undefined)[],
  key: string | undefined,
  message: (value: string) => string,
): NameClash[] {
  const seen = new Set<string>();
  const clashes: NameClash[] = [];
  values.forEach((value, index) => {
    if (value === undefined) return;
    if (seen.has(value)) clashes.push({ path: key === undefined ? [index] : [index, key], message: message(value) });
    seen.add(value);
  });
  return clashes;
}
