import * as oc from 'openid-client';
import type { UserRecord } from '../../src/data/repositories/user-repository.js';
import { DEFAULT_PASSWORD, makeUser } from './factories.js';
import { startTcpProxy } from './tcp-proxy.js';
import { startTestApp, type TestApp } from './test-app.js';

/**
 * A TCP front with a fixed port whose target can change (the relay of tcp-proxy.ts): the public URL
 * (the OpenID issuer) is known before the app listens, and a test can move the front from one instance to another.
 */
export async function startFront(): Promise<{ port: number; url: string; target(port: number): Promise<void>; close(): Promise<void> }> {
  const proxy = await startTcpProxy();
  return { port: proxy.port, url: `http://127.0.0.1:${proxy.port}`, target: proxy.target, close: proxy.close };
}

export type Jar = ReturnType<typeof createJar>;

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

/** A new user signed in through `POST /auth/login` at `base` (the front): the jar holds the session cookie. */
export async function signedInJar(t: TestApp, base: string, values: Parameters<typeof makeUser>[1] = {}): Promise<{ user: UserRecord; jar: Jar }> {
  const user = await makeUser(t, values);
  const jar = createJar();
  const res = await jar.fetch(`${base}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: user.email, password: DEFAULT_PASSWORD }),
  });
  if (res.status !== 200) throw new Error(`sign-in answered ${res.status}: ${await res.text()}`);
  if (!jar.cookies.has('session_id')) throw new Error('sign-in set no session cookie');
  return { user, jar };
}

/** An authorization request (PKCE S256 and a state) for `redirect_uri`, with `params` added. */
export async function authorizationRequest(config: oc.Configuration, redirectUri: string, params: Record<string, string> = {}) {
  const verifier = oc.randomPKCECodeVerifier();
  const state = oc.randomState();
  const url = oc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    code_challenge: await oc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...params,
  });
  return { url: url.toString(), verifier, state };
}

/**
 * An instance behind a front (its issuer) with one first-party confidential client for `redirectUri`;
 * `rp()` is that client's discovered configuration.
 */
export async function startProviderWithClient(env: Record<string, string>, redirectUri: string) {
  const front = await startFront();
  const t = await startTestApp({ env: { PUBLIC_URL: front.url, ...env } });
  await front.target(Number(new URL(t.url).port));
  const c = await t.app.services.oidc.clients.add({ name: 'Demo', redirect_uris: [redirectUri], first_party: true });
  const client = { id: c.client.client_id, secret: c.client_secret! };
  return {
    front,
    t,
    client,
    rp: () => oc.discovery(new URL(front.url), client.id, undefined, oc.ClientSecretBasic(client.secret), { execute: [oc.allowInsecureRequests] }),
    async close() {
      await t.close();
      await front.close();
    },
  };
}
