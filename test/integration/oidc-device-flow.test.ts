import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryTypes } from 'sequelize';
import { BACKEND } from '../helpers/backend.js';
import { DEFAULT_PASSWORD, makeSession, makeUser } from '../helpers/factories.js';
import { startFront } from '../helpers/oidc-rp.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { csrfIn, WebClient } from '../helpers/web-client.js';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;
const AT_ONCE = 20;

/**
 * RFC 8628 end to end over HTTP (docs/oidc.md "Devices"): the device asks /oidc/device/auth, a person signs in
 * through the hosted pages, types the code on /device and allows or denies, and the device's polling at
 * /oidc/token gets tokens once, `authorization_pending`/`slow_down` before, `access_denied` or `expired_token`.
 */
describe(`the device authorization grant (${BACKEND})`, () => {
  let front: Awaited<ReturnType<typeof startFront>>;
  let t: TestApp;
  let tv: string;
  let firstParty: string;
  let noGrant: string;

  beforeAll(async () => {
    front = await startFront();
    t = await startTestApp({ env: { PUBLIC_URL: front.url } });
    await front.target(Number(new URL(t.url).port));
    const clients = t.app.services.oidc.clients;
    tv = (await clients.add({ name: 'Living-room TV', redirect_uris: ['http://localhost/cb'], public: true, device_flow: true })).client.client_id;
    firstParty = (await clients.add({ name: 'Own CLI', redirect_uris: ['http://localhost/cb'], public: true, first_party: true, device_flow: true })).client
      .client_id;
    noGrant = (await clients.add({ name: 'Web only', redirect_uris: ['http://localhost/cb'], public: true })).client.client_id;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await front?.close();
  });

  const post = (path: string, params: Record<string, string>) =>
    fetch(`${front.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params) }).then(
      async (res) => ({ status: res.status, body: (await res.json()) as Record<string, string> }),
    );
  const deviceAuth = async (clientId = tv, scope = 'openid profile email offline_access') => {
    const r = await post('/oidc/device/auth', { client_id: clientId, scope });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };
  const poll = (clientId: string, deviceCode: string) => post('/oidc/token', { grant_type: DEVICE_GRANT, client_id: clientId, device_code: deviceCode });

  /** A browser signed in with the session cookie (the hosted sign-in's cookie, set by POST /auth/login). */
  async function signedInBrowser() {
    const user = await makeUser(t);
    const web = new WebClient(front.url);
    const res = await web.request('POST', '/auth/login', { json: { email: user.email, password: DEFAULT_PASSWORD }, headers: { accept: 'application/json' } });
    expect(res.status).toBe(200);
    expect(web.jar.has('session_id')).toBe(true);
    return { user, web };
  }
  /** Types the code on /device (with the page's CSRF token) and answers the confirmation. */
  async function answer(web: WebClient, userCode: string, decision: 'allow' | 'deny') {
    const confirm = await web.submit(`/device?user_code=${encodeURIComponent(userCode)}`, '/device', { user_code: userCode });
    expect(confirm.status, confirm.text).toBe(200);
    return web.request('POST', '/device', { form: { _csrf: csrfIn(confirm.text), user_code: userCode, decision } });
  }

  it('discovery names the device authorization endpoint and the grant, and the endpoint answers as RFC 8628 §3.2 says', async () => {
    const meta = (await (await fetch(`${front.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(meta.device_authorization_endpoint).toBe(`${front.url}/oidc/device/auth`);
    expect(meta.grant_types_supported).toContain(DEVICE_GRANT);
    const body = await deviceAuth();
    expect(body.user_code).toMatch(USER_CODE);
    expect(body.verification_uri).toBe(`${front.url}/device`);
    expect(body.verification_uri_complete).toBe(`${front.url}/device?user_code=${body.user_code}`);
    expect(body.expires_in).toBeGreaterThan(590);
    expect(body.expires_in).toBeLessThanOrEqual(600);
    expect(body.interval).toBe(5);
    // Tokens for a registered API are not what the page asks about: a resource is refused.
    const api = 'https://api.example.test';
    await t.app.services.oidc.resources.add({ identifier: api, name: 'Things', scopes: ['read:things'] });
    const allowed = (
      await t.app.services.oidc.clients.add({
        name: 'API TV',
        redirect_uris: ['http://localhost/cb'],
        public: true,
        device_flow: true,
        allowed_resources: [api],
      })
    ).client.client_id;
    for (const clientId of [tv, allowed]) {
      const withResource = await post('/oidc/device/auth', { client_id: clientId, scope: 'openid read:things', resource: api });
      expect(withResource.status, clientId).toBe(400);
      expect(withResource.body.error).toBe('invalid_target');
    }
  });

  it('a client registered without the grant gets unauthorized_client, at the endpoint and at the token endpoint', async () => {
    const r = await post('/oidc/device/auth', { client_id: noGrant, scope: 'openid' });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error).toBe('unauthorized_client');
    const code = (await deviceAuth()).device_code;
    expect((await poll(noGrant, code)).body.error).toBe('unauthorized_client');
  });

  it('signed out, /device sends the browser to the hosted sign-in and back, the code kept', async () => {
    const { user_code } = await deviceAuth();
    const res = await new WebClient(front.url).get(`/device?user_code=${user_code}`);
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/login?return_to=${encodeURIComponent(`/device?user_code=${user_code}`)}`);
  });

  it('the whole flow: pending and slow_down while it waits, then the signed-in user allows and the device gets tokens for that user, once', async () => {
    const { device_code, user_code } = await deviceAuth();
    expect((await poll(tv, device_code)).body.error).toBe('authorization_pending');
    // Polled again at once, sooner than the interval: slow down (RFC 8628 §3.5).
    const fast = await poll(tv, device_code);
    expect(fast.status).toBe(400);
    expect(fast.body.error).toBe('slow_down');

    const { user, web } = await signedInBrowser();
    const page = await web.get(`/device?user_code=${user_code}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`value="${user_code}"`);
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'nonce-/);
    const confirm = await web.submit(`/device?user_code=${user_code}`, '/device', { user_code: user_code.toLowerCase().replace('-', ' ') });
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('Living-room TV');
    expect(confirm.text).toContain(user_code);
    expect(confirm.text).toContain('your email address');
    const done = await web.request('POST', '/device', { form: { _csrf: csrfIn(confirm.text), user_code, decision: 'allow' } });
    expect(done.status).toBe(200);
    expect(done.text).toContain('Device connected');

    const tokens = await poll(tv, device_code);
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    const claims = JSON.parse(Buffer.from(tokens.body.id_token.split('.')[1], 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ sub: user.id, aud: tv, iss: front.url });
    expect(tokens.body.refresh_token).toBeTruthy();
    const info = await fetch(`${front.url}/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens.body.access_token}` } });
    expect(((await info.json()) as { email: string }).email).toBe(user.email);
    // The same consent rules as the code flow: a third-party client's consent is remembered (and revocable).
    expect((await t.app.services.oidc.consents(user.id)).map((c) => c.client_id)).toEqual([tv]);
    // The code is spent: the page and the token endpoint both refuse it now (a replay revokes what it issued).
    expect((await web.submit('/device', '/device', { user_code })).text).toContain('invalid or expired');
    expect((await poll(tv, device_code)).body.error).toBe('invalid_grant');
    expect((await fetch(`${front.url}/oidc/userinfo`, { headers: { authorization: `Bearer ${tokens.body.access_token}` } })).status).toBe(401);
    const events = await t.app.services.audit.list({ types: ['oidc.device_approved'], userId: user.id } as never);
    expect(events.events[0]).toMatchObject({ actor: { via: 'oidc_client', client_id: tv }, details: { client_id: tv } });
  });

  it(`when ${AT_ONCE} token requests redeem one approved device code at once, exactly one gets tokens`, async () => {
    const { user } = await signedInBrowser();
    for (let round = 0; round < 3; round++) {
      const { device_code, user_code } = await deviceAuth(firstParty, 'openid');
      const { web } = await signedInBrowser();
      expect((await answer(web, user_code, 'allow')).status).toBe(200);
      const answers = await Promise.all(Array.from({ length: AT_ONCE }, () => poll(firstParty, device_code)));
      const won = answers.filter((r) => r.status === 200);
      expect(won, `round ${round}: ${JSON.stringify(answers.map((r) => r.status))}`).toHaveLength(1);
      for (const lost of answers.filter((r) => r.status !== 200)) expect(lost.body.error).toBe('invalid_grant');
    }
    // A first-party client's approval is not remembered as a consent (as in the code flow).
    expect(await t.app.services.oidc.consents(user.id)).toEqual([]);
  });

  it('denied: the page says so, the device gets access_denied, and the denial is recorded with the client', async () => {
    const { device_code, user_code } = await deviceAuth();
    const { user, web } = await signedInBrowser();
    const denied = await answer(web, user_code, 'deny');
    expect(denied.status).toBe(200);
    expect(denied.text).toContain('Access denied');
    const r = await poll(tv, device_code);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('access_denied');
    const events = await t.app.services.audit.list({ types: ['oidc.device_denied'], userId: user.id } as never);
    expect(events.events[0]).toMatchObject({ outcome: 'failure', actor: { via: 'oidc_client', client_id: tv } });
  });

  it('a wrong, malformed or expired code is "invalid or expired" and nothing more; an expired one polls as expired_token', async () => {
    const { web } = await signedInBrowser();
    for (const code of ['BBBB-BBBB', 'AEIO-U123', 'x'.repeat(40)]) {
      const r = await web.submit('/device', '/device', { user_code: code });
      expect(r.status).toBe(400);
      expect(r.text).toContain('That code is invalid or expired');
    }
    const { device_code, user_code } = await deviceAuth();
    // Its lifetime passes: the stored payload's expiry is moved into the past (the row stays, as it does after expiry).
    const seq = t.app.sequelize;
    const [row] = await seq.query<{ payload: string }>("SELECT payload FROM oidc_artefacts WHERE model = 'DeviceCode' AND id = ?", {
      type: QueryTypes.SELECT,
      replacements: [device_code],
    });
    const payload = JSON.parse(row.payload) as { exp: number };
    payload.exp = Math.floor(Date.now() / 1000) - 1;
    await seq.query("UPDATE oidc_artefacts SET payload = ? WHERE model = 'DeviceCode' AND id = ?", { replacements: [JSON.stringify(payload), device_code] });
    const r = await web.submit('/device', '/device', { user_code });
    expect(r.status).toBe(400);
    expect(r.text).toContain('That code is invalid or expired');
    const allow = await web.request('POST', '/device', { form: { _csrf: csrfIn(r.text), user_code, decision: 'allow' } });
    expect(allow.status).toBe(400);
    expect((await poll(tv, device_code)).body.error).toBe('expired_token');
  });

  it('a post without the CSRF token is refused, and a pending second step is not a session: back to the sign-in', async () => {
    const { user_code } = await deviceAuth();
    const { web } = await signedInBrowser();
    const noToken = await web.request('POST', '/device', { form: { user_code, decision: 'allow' } });
    expect(noToken.status).toBe(403);
    const anonymous = new WebClient(front.url);
    const r = await anonymous.submit('/login', '/device', { user_code });
    expect(r.status).toBe(303);
    expect(r.location).toMatch(/^\/login\?return_to=/);
  });

  it('the admin API registers a client with the grant and takes it away again (device_flow)', async () => {
    const admin = (await makeSession(t, { user_type: 'superadmin' })).token;
    const made = await t.request('POST', '/auth/admin/oidc/clients', {
      session: admin,
      body: { name: 'Kiosk', redirect_uris: ['http://localhost/cb'], public: true, device_flow: true },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body.data.client).toMatchObject({ device_flow: true, grant_types: expect.arrayContaining([DEVICE_GRANT]) });
    const id = made.body.data.client.client_id as string;
    expect((await post('/oidc/device/auth', { client_id: id, scope: 'openid' })).status).toBe(200);
    const off = await t.request('PATCH', `/auth/admin/oidc/clients/${id}`, { session: admin, body: { device_flow: false } });
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect(off.body.data.client.device_flow).toBe(false);
    expect(off.body.data.client.grant_types).not.toContain(DEVICE_GRANT);
    expect((await post('/oidc/device/auth', { client_id: id, scope: 'openid' })).body.error).toBe('unauthorized_client');
    const bad = await t.request('POST', '/auth/admin/oidc/clients', {
      session: admin,
      body: { name: 'X', redirect_uris: ['http://localhost/cb'], device_flow: 'yes' },
    });
    expect(bad.status).toBe(400);
  });
});

/** RFC 8628 §5.1: user codes are guessable in principle, so looking them up is rate-limited, per address and per session. */
describe(`typing device codes is rate-limited (${BACKEND})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    // Behind one trusted proxy: X-Forwarded-For's last hop is the address the gate counts.
    t = await startTestApp({ env: { RATE_LIMIT_TOKEN_VALIDATE: '3/5m', TRUST_PROXY: '1' } });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  const signIn = async (ip: string) => {
    const user = await makeUser(t);
    const web = new WebClient(t.url, { 'x-forwarded-for': ip });
    const res = await web.request('POST', '/auth/login', { json: { email: user.email, password: DEFAULT_PASSWORD }, headers: { accept: 'application/json' } });
    expect(res.status).toBe(200);
    return web;
  };
  const tries = async (web: WebClient, n: number) => {
    const token = csrfIn((await web.get('/device')).text);
    const statuses: number[] = [];
    for (let i = 0; i < n; i++) statuses.push((await web.request('POST', '/device', { form: { _csrf: token, user_code: 'BBBB-BBBB' } })).status);
    return statuses;
  };

  it('per address: a second session from the address that spent the budget is refused too', async () => {
    expect(await tries(await signIn('203.0.113.1'), 4)).toEqual([400, 400, 400, 429]);
    expect(await tries(await signIn('203.0.113.1'), 1)).toEqual([429]);
  });

  it('per session: a session that spent its budget is refused from a new address as well, with the 429 page', async () => {
    const web = await signIn('203.0.113.2');
    expect(await tries(web, 3)).toEqual([400, 400, 400]);
    web.headers['x-forwarded-for'] = '203.0.113.3';
    const token = csrfIn((await web.get('/device')).text);
    const refused = await web.request('POST', '/device', { form: { _csrf: token, user_code: 'CCCC-CCCC' } });
    expect(refused.status).toBe(429);
    expect(refused.text).toContain('<html');
  });
});
