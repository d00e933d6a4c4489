import { startTcpProxy } from './tcp-proxy.js';

/**
 * A TCP front with a fixed port whose target can change (the relay of tcp-proxy.ts): the public URL
 * (the OpenID issuer) is known before the app listens, and a test can move the front from one instance to another.
 */
export async function startFront(): Promise<{ port: number; url: string; target(port: number): Promise<void>; close(): Promise<void> }> {
  const proxy = await startTcpProxy();
  return { port: proxy.port, url: `http://127.0.0.1:${proxy.port}`, target: proxy.target, close: proxy.close };
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
