// What the process does with a failure no code caught. Both cases are bugs; the policy is:
//
// - An unhandled promise rejection abandoned only the work that promise carried (one request, one
//   background task). The gateway logs it loudly and keeps serving: exiting would turn one bad
//   request into an outage for every client.
// - An uncaught exception escaped a callback half-way, so shared state may be half-updated. The
//   gateway logs it loudly and shuts down gracefully (in-flight requests drain within
//   server.drain_timeout), exiting with code 70 so a supervisor restarts it. A second one while
//   draining exits at once.

export const EXIT_INTERNAL_ERROR = 70;

export interface CrashPolicyHooks {
  /** Writes one line where an operator will see it (stderr). */
  readonly report: (line: string) => void;
  /** Starts the graceful shutdown. */
  readonly shutDown: () => void;
  /** Ends the process now. */
  readonly exitNow: (code: number) => void;
}

/** The events it listens to: `process`, or a stand-in in tests. */
export interface ProcessEvents {
  on(event: 'unhandledRejection' | 'uncaughtException', listener: (error: unknown) => void): unknown;
  off(event: 'unhandledRejection' | 'uncaughtException', listener: (error: unknown) => void): unknown;
}

export interface CrashPolicy {
  /** True once an uncaught exception started a shutdown: the command's exit code becomes 70. */
  readonly crashed: () => boolean;
  readonly uninstall: () => void;
}

export function installCrashPolicy(target: ProcessEvents, hooks: CrashPolicyHooks): CrashPolicy {
  let crashed = false;
  const onRejection = (reason: unknown): void => {
    hooks.report(describe('error', 'unhandled promise rejection (a bug): its work was abandoned; still serving', reason));
  };
  const onException = (error: unknown): void => {
    if (crashed) {
      hooks.report(describe('fatal', 'uncaught exception while shutting down (a bug): exiting now', error));
      hooks.exitNow(EXIT_INTERNAL_ERROR);
      return;
    }
    crashed = true;
    hooks.report(describe('fatal', 'uncaught exception (a bug): draining in-flight requests, then exiting', error));
    hooks.shutDown();
  };
  target.on('unhandledRejection', onRejection);
  target.on('uncaughtException', onException);
  return {
    crashed: () => crashed,
    uninstall: () => {
      target.off('unhandledRejection', onRejection);
      target.off('uncaughtException', onException);
    },
  };
}

function describe(level: 'error' | 'fatal', msg: string, error: unknown): string {
  const err =
    error instanceof Error ? { type: error.name, message: error.message, stack: error.stack } : { message: String(error) };
  return JSON.stringify({ level, time: Date.now(), msg, err });
}
