// A typed key for one feature's part in a record shared by every feature (a request's caller, a
// request plane's figures): the record names no feature, and the feature that owns the concept
// holds the key (and whoever may read it imports the key from there). A part no feature set is
// absent; an absent feature sets nothing.

/** The key of a part of type `T`; compared by identity, named for messages. */
export interface PartKey<T> {
  readonly name: string;
  /** Type only: the part's type (never set). */
  readonly part?: T;
}

/** The parts of a record, each under its owner's key. */
export type Parts = ReadonlyMap<PartKey<unknown>, unknown>;

export function partKey<T>(name: string): PartKey<T> {
  return Object.freeze({ name });
}

/** The part under `key`, undefined when no feature set it. */
export function partIn<T>(parts: Parts | undefined, key: PartKey<T>): T | undefined {
  return parts?.get(key) as T | undefined;
}

/** One part in a record of its own (a caller's, say). */
export function partsOf<T>(key: PartKey<T>, part: T): Parts {
  return new Map<PartKey<unknown>, unknown>([[key, part]]);
}
