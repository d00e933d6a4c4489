import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oc from 'openid-client';
import { BACKEND } from '../helpers/backend.js';
import { startHttpsHost, TEST_TLS } from '../helpers/https-host.js';
import { authorizationRequest, signedInJar, startFront, type Jar } from '../helpers/oidc-rp.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const REDIRECT = 'http://127.0.0.1:9999/cb';

/**
 * Client ID Metadata Documents (src/oidc/client-metadata.ts): with OIDC_CLIENT_METADATA_DOCUMENTS=true an https
 * URL is a client_id whose JSON document the provider fetches, by the webhook address rules, within a time
 * and a size limit, without following redirects, and keeps in its cache. Such a client is third-party (the
 * consent page), public, PKCE-bound. The document host is a real https server on 127.0.0.1 with a
 * self-signed certificate that only these apps trust (`outboundCa`).
 */
describe(`Client ID Metadata Documents (${BACKEND})`, () => {
  let host: Awaited<ReturnType<typeof startHttpsHost>>;
  let front: Awaited<ReturnType<typeof startFront>>;
  let t: TestApp;
  let off: TestApp;
  let strict: TestApp;
  const doc = (path: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      client_id: host.url(path),
      client_name: 'Helpful Agent',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      ...extra,
    });
  const json = (body: () => string) => (res: import('node:http').ServerResponse) =>
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' }).end(body());

  beforeAll(async () => {
    host = await startHttpsHost({
      '/agent.json': json(() => doc('/agent.json')),
      '/other-id.json': json(() => doc('/other-id.json', { client_id: host.url('/agent.json') })),
      '/big.json': json(() => doc('/big.json', { x_padding: 'x'.repeat(6000) })),
      '/redirect.json': (res) => res.writeHead(302, { location: host.url('/agent.json') }).end(),
      '/first-party.json': json(() => doc('/first-party.json', { first_party: true })),
      '/resources.json': json(() => doc('/resources.json', { allowed_resources: ['https://api.example.com'] })),
      '/slow.json': (res) => void setTimeout(() => json(() => doc('/slow.json'))(res), 8000),
    });
    front = await startFront();
    const on = { OIDC_CLIENT_METADATA_DOCUMENTS: 'true' };
    t = await startTestApp({ env: { PUBLIC_URL: front.url, ...on, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }, outboundCa: TEST_TLS.cert });
    await front.target(Number(new URL(t.url).port));
    off = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }, outboundCa: TEST_TLS.cert });
    strict = await startTestApp({ env: on, outboundCa: TEST_TLS.cert });
  }, 90_000);
  afterAll(async () => {
    await strict?.close();
    await off?.close();
    await t?.close();
    await front?.close();
    await host?.close();
  });

  const rp = (clientId: string) => oc.discovery(new URL(front.url), clientId, undefined, oc.None(), { execute: [oc.allowInsecureRequests] });

  /** A bare authorization request for `clientId` (PKCE unless `pkce` is false): the provider's answer. */
  async function authorize(app: { url: string }, clientId: string, pkce = true) {
    const q = new URLSearchParams({ client_id: clientId, response_type: 'code', redirect_uri: REDIRECT, scope: 'openid' });
    if (pkce) {
      q.set('code_challenge', await oc.calculatePKCECodeChallenge(oc.randomPKCECodeVerifier()));
      q.set('code_challenge_method', 'S256');
    }
    const res = await fetch(`${app.url}/oidc/auth?${q}`, { redirect: 'manual' });
    return { status: res.status, location: res.headers.get('location'), text: await res.text() };
  }

  /** Through the consent page (it must be shown) to the callback with a code. */
  async function consentAndCallback(jar: Jar, url: string) {
    const first = await jar.follow(url);
    expect(first.res.status).toBe(200);
    const html = await first.res.text();
    expect(html).toContain('Allow access?');
    // The document's name, and the host that serves it (the name alone could claim anything).
    expect(html).toContain(`Helpful Agent (127.0.0.1:${host.port})`);
    const action = /action="([^"]+)"/.exec(html)![1];
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1];
    const allowed = await jar.fetch(new URL(action, front.url).toString(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, decision: 'allow' }),
    });
    expect(allowed.status).toBe(303);
    return (await jar.follow(new URL(allowed.headers.get('location')!, front.url).toString())).final;
  }

  it('an https URL as client_id: discovery says so, the consent page is shown, the code flow gets tokens; the cache spares a second fetch', async () => {
    const clientId = host.url('/agent.json');
    const config = await rp(clientId);
    expect(config.serverMetadata().client_id_metadata_document_supported).toBe(true);
    const { jar } = await signedInJar(t, front.url);
    const { url, verifier, state } = await authorizationRequest(config, REDIRECT, { scope: 'openid' });
    const final = await consentAndCallback(jar, url);
    const tokens = await oc.authorizationCodeGrant(config, new URL(final), { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.access_token).toEqual(expect.any(String));
    expect(tokens.claims()!.aud).toBe(clientId);
    expect(host.hits('/agent.json')).toBe(1);

    // Another user, another authorization: the document comes from the cache, and the consent page again (never first-party).
    const second = await signedInJar(t, front.url);
    const again = await authorizationRequest(config, REDIRECT, { scope: 'openid' });
    const final2 = await consentAndCallback(second.jar, again.url);
    expect((await oc.authorizationCodeGrant(config, new URL(final2), { pkceCodeVerifier: again.verifier, expectedState: again.state })).id_token).toBeTruthy();
    expect(host.hits('/agent.json')).toBe(1);
  });

  it('PKCE is required of such a client', async () => {
    const res = await authorize(t, host.url('/agent.json'), false);
    expect(new URL(res.location!).searchParams.get('error_description')).toMatch(/PKCE/);
  });

  it('off by default: the URL is an unknown client and nothing is fetched; discovery does not advertise it', async () => {
    const before = host.hits('/agent.json');
    const res = await authorize(off, host.url('/agent.json'));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ success: false, code: 'INVALID_CLIENT' });
    expect(host.hits('/agent.json')).toBe(before);
    const disc = (await (await fetch(`${off.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(disc.client_id_metadata_document_supported).toBeUndefined();
  });

  it.each([
    ['whose client_id differs', '/other-id.json'],
    ['too big (over 5 kB)', '/big.json'],
    ['behind a redirect (not followed)', '/redirect.json'],
    ['that calls itself first-party', '/first-party.json'],
    ['that allows itself a registered API', '/resources.json'],
  ])('a document %s is refused', async (_what, path) => {
    const before = host.hits('/agent.json');
    const res = await authorize(t, host.url(path));
    // Fetched, and not kept: oidc-provider's error handler looks the client up once more (a second fetch).
    expect(host.hits(path)).toBeGreaterThanOrEqual(1);
    expect(host.hits(path)).toBeLessThanOrEqual(2);
    // Nothing else was fetched (a redirect is not followed).
    expect(host.hits('/agent.json')).toBe(before);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ success: false, code: expect.stringMatching(/^INVALID_CLIENT/) });
  });

  it('a document that answers too slowly is refused within the time limit', async () => {
    const started = Date.now();
    const res = await authorize(t, host.url('/slow.json'));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).code).toBe('INVALID_CLIENT');
    expect(Date.now() - started).toBeLessThan(7000);
  }, 20_000);

  it('a host resolving to a private address is refused without WEBHOOK_ALLOW_PRIVATE_URLS, and never contacted', async () => {
    const before = host.hits('/agent.json');
    for (const h of ['localhost', '127.0.0.1']) {
      const res = await authorize(strict, host.url('/agent.json', h));
      expect(res.status).toBe(400);
      expect(JSON.parse(res.text).code).toBe('INVALID_CLIENT');
    }
    expect(host.hits('/agent.json')).toBe(before);
  });
});
