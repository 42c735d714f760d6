/** Free TCP ports on loopback, for servers a test starts itself (Prometheus, a container's port). */
import { createServer, type Server, type Socket } from 'node:net';

/** A port free on 127.0.0.1 at the time of asking. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** A server on 127.0.0.1 that takes every connection and never writes a byte: an upstream or a store that hangs. */
export interface SilentServer {
  readonly server: Server;
  readonly port: number;
  /** The connections it took. */
  readonly sockets: readonly Socket[];
  /** Drops the connections it holds and stops listening. */
  close(): Promise<void>;
}

/** Starts a `SilentServer`. */
export async function silentServer(): Promise<SilentServer> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    server,
    port: (server.address() as { port: number }).port,
    sockets,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
