// Everything long-lived (loops, servers) is a Service: started with a signal, stopped idempotently.

export interface Service {
  readonly name: string;
  /** Resolves once the service is running. */
  start(signal: AbortSignal): Promise<void>;
  /** Idempotent; resolves when in-flight work has finished or been abandoned. */
  stop(): Promise<void>;
}
