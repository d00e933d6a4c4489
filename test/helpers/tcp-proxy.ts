import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Drops every open connection and refuses new ones, as a server that went away. */
  cut(): Promise<void>;
  /** Accepts connections again on the same port (nothing, if it does already). */
  restore(): Promise<void>;
  /**
   * Sends new connections to another port (open ones are dropped, so a kept-alive client reconnects):
   * for a front whose port must be known before the server behind it listens, or that moves between instances.
   */
  target(port: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A TCP relay in front of a real server. Cutting it is a database outage as the app sees one
 * (connections reset, then refused) without stopping the shared server other jobs use. A target of 0
 * refuses nothing yet but relays nowhere: set it with `target` once the server behind listens.
 */
export async function startTcpProxy(targetPort = 0, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  let port = 0;
  const listen = async () => {
    const s = net.createServer((client) => {
      const upstream = net.connect(targetPort, targetHost);
      for (const sock of [client, upstream]) {
        sockets.add(sock);
        sock.on('close', () => sockets.delete(sock));
        sock.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
    });
    port = (s.address() as net.AddressInfo).port;
    server = s;
  };
  const cut = async () => {
    const s = server;
    server = null;
    for (const sock of sockets) sock.destroy();
    sockets.clear();
    if (s) await new Promise<void>((r) => s.close(() => r()));
  };
  await listen();
  return {
    get port() {
      return port;
    },
    cut,
    restore: async () => {
      if (!server) await listen();
    },
    async target(p: number) {
      targetPort = p;
      for (const sock of sockets) sock.destroy();
      sockets.clear();
      // A moment lets a client see the old connections close before its next request.
      await new Promise((r) => setTimeout(r, 50));
    },
    close: cut,
  };
}
