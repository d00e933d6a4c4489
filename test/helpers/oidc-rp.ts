import net from 'node:net';

/**
 * A TCP front with a fixed port whose target can change: the public URL (the OpenID issuer) is known
 * before the app listens, and a test can move the front from one instance to another.
 */
export async function startFront(): Promise<{ port: number; url: string; target(port: number): Promise<void>; close(): Promise<void> }> {
  let targetPort = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
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
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    async target(p: number) {
      targetPort = p;
      // New requests go to the new target (fetch would otherwise reuse a kept-alive connection);
      // a moment lets the client see the old connections close before its next request.
      for (const s of sockets) s.destroy();
      await new Promise((r) => setTimeout(r, 50));
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A minimal browser: a cookie jar per origin and manual redirects, stopping at the relying party's redirect URI. */
export function createJar() {
  const cookies = new Map<string, string>();
  const header = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const keep = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      const expired = attrs.some((a) => /expires=thu, 01 jan 1970/i.test(a.trim())) || value === '';
      if (expired) cookies.delete(name);
      else cookies.set(name, value);
    }
  };
  return {
    cookies,
    async fetch(url: string, init: RequestInit = {}): Promise<Response> {
      const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: header() } });
      keep(res);
      return res;
    },
    /** Follows same-origin redirects from `url` until one leaves the origin (the callback) or a page answers. */
    async follow(url: string, init: RequestInit = {}): Promise<{ final: string; res: Response }> {
      let current = url;
      let res = await this.fetch(current, init);
      for (let i = 0; i < 10 && res.status >= 300 && res.status < 400; i++) {
        const next = new URL(res.headers.get('location')!, current).toString();
        if (new URL(next).origin !== new URL(current).origin) return { final: next, res };
        current = next;
        res = await this.fetch(current);
      }
      return { final: current, res };
    },
  };
}
