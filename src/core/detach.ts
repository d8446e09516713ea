// Work that nobody awaits (a loop started, a refresh kicked off, a request handled by a server
// callback) must still have its failure go somewhere: an unobserved rejection is a bug that the
// process-level policy (src/cli/crash-policy.ts) can only log after the fact.

/** Runs `work` without awaiting it; a rejection goes to `onError`, which must not throw. */
export function detach(work: Promise<unknown>, onError: (error: unknown) => void): void {
  work.catch((error: unknown) => {
    try {
      onError(error);
    } catch {
      // The error handler itself failed (a closed log stream, say): nothing safer is left to do.
    }
  });
}
