import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { ServerResponse } from 'node:http';

/**
 * A self-signed certificate for `localhost` and 127.0.0.1 (EC P-256, valid a century), for tests only: its
 * key is public here. Made with
 * `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500 -subj /CN=localhost
 *  -addext subjectAltName=DNS:localhost,IP:127.0.0.1`. The app trusts it only when a test hands it over
 * (`startTestApp({ outboundCa: TEST_TLS.cert })`).
 */
export const TEST_TLS = {
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg0do5UXsjVvXdMMKK
fpgv0oGtl/JFb2Sd0Tv/Ig4nhMKhRANCAAQu5gFIbqPp8z0X79hclD2cshF7HkIK
PHrUhc5VU0uALp5d/kKGNKviCThXdOlkYAxSenXhbnOuAz+0f0IxRHoM
-----END PRIVATE KEY-----
`,
  cert: `-----BEGIN CERTIFICATE-----
MIIBmjCCAUGgAwIBAgIUFa7cfpE1jhbqAOWd6jir5CPNMrIwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTIwNzIwMzAwN1oYDzIxMjYxMTEz
MjAzMDA3WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAQu5gFIbqPp8z0X79hclD2cshF7HkIKPHrUhc5VU0uALp5d/kKGNKvi
CThXdOlkYAxSenXhbnOuAz+0f0IxRHoMo28wbTAdBgNVHQ4EFgQUvv/7ymzXRzVc
VOouqy0oagKqw6EwHwYDVR0jBBgwFoAUvv/7ymzXRzVcVOouqy0oagKqw6EwDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARgglsb2NhbGhvc3SHBH8AAAEwCgYIKoZI
zj0EAwIDRwAwRAIgbDUDftw2t0mSH0SLRAsublbC6CgqOXpn8pY/IWXLhnwCIB7V
Mq9Id4vcSkYoCEo+QJbKkoOBfNkin5UFnsdWAl9M
-----END CERTIFICATE-----
`,
};

/** What a path answers: a handler writing the response (held responses are ended on close). */
export type HostRoute = (res: ServerResponse) => void;

/** An https server on 127.0.0.1 with TEST_TLS, answering per path; it counts the requests of each path. */
export async function startHttpsHost(routes: Record<string, HostRoute>) {
  const hits = new Map<string, number>();
  const open = new Set<ServerResponse>();
  const server = https.createServer({ key: TEST_TLS.key, cert: TEST_TLS.cert }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    open.add(res);
    res.on('close', () => open.delete(res));
    const route = routes[path];
    if (route) route(res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    /** The URL of `path` on 127.0.0.1, or on `localhost` (a name that resolves to a loopback address). */
    url: (path: string, host = '127.0.0.1') => `https://${host}:${port}${path}`,
    hits: (path: string) => hits.get(path) ?? 0,
    async close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
