// SO_REUSEPORT lets every socket of the same user bind the port, so a second gateway started on
// the same address by mistake would not fail: it would silently take half the connections with
// leases of its own, and over-admit. The guard is an abstract Unix socket named by the address
// (Linux; it goes away with the process): the second gateway cannot bind it, and says why.

import { createServer, type Server } from 'node:net';

export interface ListenGuard {
  close(): Promise<void>;
}

export async function guardListenAddress(host: string, port: number): Promise<ListenGuard> {
  const server: Server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(
              `another Switchyard gateway with [server] workers already listens on ${host}:${port}; SO_REUSEPORT would let the two share it (and its leases would not be shared)`,
            )
          : error,
      ),
    );
    server.listen({ path: `\0switchyard-listen ${host}:${port}` }, () => resolve());
  });
  server.unref();
  return { close: () => new Promise((resolve) => server.close(() => resolve())) };
}
