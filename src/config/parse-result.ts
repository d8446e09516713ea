// The outcome of parsing one config value: the value, or a message saying what is wrong with it.
// Messages never quote the input, so a secret typed into the wrong key is not echoed back.

export type ParseResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

export function valid<T>(value: T): ParseResult<T> {
  return { ok: true, value };
}

export function invalid<T>(message: string): ParseResult<T> {
  return { ok: false, message };
}
