import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { P, rowsOf } from '../../modules/passkeys/test/world.js';
import type { UserRecord } from '../../src/module-api.js';
import { startAppWithMail, type AppWithMail } from '../helpers/app-with-mail.js';
import { addVirtualAuthenticator, guardedContext, launchChromium, type GuardedContext, type VirtualAuthenticator } from '../helpers/chromium.js';
import { makeSession, uniqueEmail } from '../helpers/factories.js';
import { mailsTo } from '../integration/flows-helpers.js';
import { startSite, type Site } from './passkeys-site.js';

/**
 * Passkeys (issue 24) in headless Chromium: the DevTools virtual authenticator (CTAP2, internal,
 * resident keys; assertions with user verification and, where the page asks for none, without) and
 * @simplewebauthn/browser in a page served at the app's public URL (`site`, http://localhost:<port>,
 * the RP ID `localhost`). `evil` serves the same page and passes requests to the same app from an
 * origin the app does not allow. One browser for the file; one context per user.
 *
 * The tests are independent (each its own user, context and authenticator) but run one after the
 * other. Side by side they were hardly faster on a loaded two-core machine, and on SQLite the app's health
 * probe (a query slower than 2 s, then BEGIN IMMEDIATE against the app's own open transaction, which
 * fails SQLITE_BUSY) now and then opened the database breaker, so that the requests answered 503.
 */
let browser: Browser;
let w: AppWithMail;
let site: Site;
let evil: Site;

beforeAll(async () => {
  [site, evil] = await Promise.all([startSite(), startSite()]);
  [browser, w] = await Promise.all([
    launchChromium(),
    startAppWithMail({
      env: { PUBLIC_URL: site.origin, WEBAUTHN_RP_ID: 'localhost', WEBAUTHN_ORIGINS: site.origin, RATE_LIMIT_PASSKEYS: '100000/1m' },
    }),
  ]);
  site.target = evil.target = w.t.url;
  await w.t.app.modules.hub.install(['passkeys', 'two-factor']);
});
afterAll(async () => {
  await browser?.close();
  await w?.close();
  await Promise.all([site?.close(), evil?.close()]);
});

interface Answer<T = any> {
  status: number;
  body: T;
}
interface Outcome {
  /** What the browser's ceremony threw, when it did. */
  error?: string;
  /** The options request, when it was refused. */
  options?: Answer;
  credential?: { id: string; response: { authenticatorData?: string } };
  verify?: Answer;
  /** The second step only: GET /auth/two_factor/methods. */
  methods?: Answer;
}
interface PageApi {
  passkeys: {
    gets: { mediation: string | null; allowCredentials: number }[];
    api(method: string, path: string, body?: unknown, session?: string): Promise<Answer>;
    autofillSupported(): Promise<boolean>;
    register(session: string, name?: string): Promise<Outcome>;
    signIn(userVerification?: 'discouraged' | 'preferred' | 'required'): Promise<Outcome>;
    autofill(): Promise<Outcome>;
    secondFactor(session: string, userVerification?: 'discouraged'): Promise<Outcome>;
  };
}
const api = (page: Page) => ({
  register: (session: string, name?: string) => page.evaluate(([s, n]) => (globalThis as unknown as PageApi).passkeys.register(s!, n), [session, name]),
  signIn: (userVerification?: 'discouraged') => page.evaluate((uv) => (globalThis as unknown as PageApi).passkeys.signIn(uv), userVerification),
  secondFactor: (session: string, userVerification?: 'discouraged') =>
    page.evaluate(([s, uv]) => (globalThis as unknown as PageApi).passkeys.secondFactor(s as string, uv), [session, userVerification] as const),
  autofill: () => page.evaluate(() => (globalThis as unknown as PageApi).passkeys.autofill()),
  autofillSupported: () => page.evaluate(() => (globalThis as unknown as PageApi).passkeys.autofillSupported()),
  gets: () => page.evaluate(() => (globalThis as unknown as PageApi).passkeys.gets),
  /** Without a session id, the request carries only what the browser keeps (the session cookie). */
  get: (path: string, session?: string) =>
    page.evaluate(([p, s]) => (globalThis as unknown as PageApi).passkeys.api('GET', p as string, undefined, s), [path, session] as const),
  post: (path: string, body: unknown, session?: string) =>
    page.evaluate(([p, b, s]) => (globalThis as unknown as PageApi).passkeys.api('POST', p as string, b, s as string | undefined), [
      path,
      body,
      session,
    ] as const),
});

interface Visit {
  g: GuardedContext;
  page: Page;
  authenticator: VirtualAuthenticator;
  call: ReturnType<typeof api>;
  user: UserRecord;
  token: string;
}

/** A user with a full session, in a context of their own, on the page of `at`, with a virtual authenticator. */
async function visit(opts: { at?: Site; user?: Partial<UserRecord> } = {}): Promise<Visit> {
  const { user, token } = await makeSession(w.t, { email: uniqueEmail('pkb'), ...opts.user });
  const g = await guardedContext(browser);
  const page = await g.newPage();
  const res = await page.goto((opts.at ?? site).page);
  expect(res?.status()).toBe(200);
  const authenticator = await addVirtualAuthenticator(page);
  return { g, page, authenticator, call: api(page), user, token };
}

/** The same user, having added a passkey on the page. */
async function withPasskey(opts: Parameters<typeof visit>[0] & { name?: string } = {}) {
  const v = await visit(opts);
  const added = await v.call.register(v.token, opts.name);
  expect(added.verify?.status, JSON.stringify(added)).toBe(200);
  return { ...v, passkey: added.verify!.body.passkey as { id: string; name: string } };
}

/** Nothing was asked of another host and no page broke its Content Security Policy; then the context goes. */
async function leave(v: Visit) {
  expect(v.g.foreign).toEqual([]);
  expect(v.g.errors.filter((e) => /Content Security Policy|Refused to/i.test(e))).toEqual([]);
  await v.g.close();
}

const events = async (userId: string, type: string) => (await w.t.app.services.audit.list({ userId, types: [type] })).events;
/** The user-verified flag (bit 2 of the flags byte) of an assertion's authenticator data. */
const userVerified = (o: Outcome) => (Buffer.from(o.credential!.response.authenticatorData!, 'base64url')[32]! & 0x04) !== 0;
const refused = (o: Outcome) => {
  expect(o.verify?.status, JSON.stringify(o)).toBe(400);
  expect(o.verify?.body).toMatchObject({ success: false, code: 'PASSKEY_INVALID' });
};
const sessionsOf = async (userId: string) => rowsOf(w.t, 'sessions', userId);

describe('passkeys in Chromium', () => {
  it('when a user adds a passkey on the page, then it is listed, recorded, mailed, and held by the authenticator as a discoverable credential', async ({
    expect,
  }) => {
    const v = await visit();
    const added = await v.call.register(v.token, 'Laptop');
    expect(added.verify?.status, JSON.stringify(added)).toBe(200);
    expect(added.verify?.body.passkey).toMatchObject({
      name: 'Laptop',
      device_type: 'singleDevice',
      backed_up: false,
      transports: ['internal'],
      last_used_at: null,
    });
    const held = await v.authenticator.credentials();
    expect(held).toHaveLength(1);
    expect(held[0]).toMatchObject({ isResidentCredential: true, rpId: 'localhost', userHandle: Buffer.from(v.user.id).toString('base64') });
    expect(Buffer.from(held[0]!.credentialId, 'base64').toString('base64url')).toBe(added.credential!.id);

    const list = await v.call.get(P, v.token);
    expect(list.status).toBe(200);
    expect(list.body.passkeys).toEqual([added.verify!.body.passkey]);
    await expect
      .poll(async () => (await events(v.user.id, 'passkeys.added')).map((e) => e.details))
      .toEqual([expect.objectContaining({ passkey_id: added.verify!.body.passkey.id, name: 'Laptop' })]);
    const mail = await w.smtp.waitFor((m) => mailsTo(w.smtp, v.user.email).includes(m) && /passkey was added/i.test(m.subject ?? ''));
    expect(mail.text).toContain('Laptop');

    // The same authenticator again: the options exclude the passkey it holds, so the browser refuses.
    const again = await v.call.register(v.token);
    expect(again.error).toMatch(/InvalidStateError/);
    expect(await rowsOf(w.t, 'passkey_credentials', v.user.id)).toHaveLength(1);
    await leave(v);
  });

  it('when a user signs out and signs in with the passkey, no email given (discoverable), then the answer is login’s with a working session and its cookie', async ({
    expect,
  }) => {
    const v = await withPasskey();
    // Added without a name: the virtual authenticator's AAGUID is no known one, so the browser names it.
    expect(v.passkey.name).toBe('Chrome on Linux');
    expect((await v.call.post('/auth/logout', {}, v.token)).status).toBe(200);
    const r = await v.call.signIn();
    expect(r.verify?.status, JSON.stringify(r)).toBe(200);
    expect(r.verify?.body).toMatchObject({ success: true, message: 'Login successful', user: { id: v.user.id, email: v.user.email } });
    expect(userVerified(r)).toBe(true);
    // One modal request, for any discoverable credential: the page named no one.
    expect(await v.call.gets()).toEqual([{ mediation: null, allowCredentials: 0 }]);
    const session = r.verify!.body.session_id as string;
    expect(r.verify!.body.sessionId).toBe(session);
    // The browser keeps the session cookie the answer set: the page is signed in with no header.
    expect((await v.call.get('/auth/session/current')).body).toMatchObject({ success: true, requires_2fa: false, user: { id: v.user.id } });
    expect((await v.call.get(P, session)).body.passkeys[0].last_used_at).not.toBeNull();
    await expect.poll(async () => (await events(v.user.id, 'sign_in.succeeded')).map((e) => e.details?.method)).toEqual(['passkey']);
    await leave(v);
  });

  it('when a user signs in through autofill, then the conditional request resolves without anything typed and opens a session', async ({ expect }) => {
    const v = await withPasskey();
    expect((await v.call.post('/auth/logout', {}, v.token)).status).toBe(200);
    expect(await v.call.autofillSupported()).toBe(true);
    const r = await v.call.autofill();
    expect(r.verify?.status, JSON.stringify(r)).toBe(200);
    expect(r.verify?.body).toMatchObject({ success: true, user: { id: v.user.id } });
    // The browser was asked through conditional mediation, for any discoverable credential, and the field stayed empty.
    expect(await v.call.gets()).toEqual([{ mediation: 'conditional', allowCredentials: 0 }]);
    expect(await v.page.inputValue('#username')).toBe('');
    expect((await v.call.get('/auth/session/current')).body).toMatchObject({ success: true, requires_2fa: false, user: { id: v.user.id } });
    await leave(v);
  });

  it('when the authenticator answers with a sign count lower than the last one (a clone), then the sign-in is refused and recorded as a possible clone', async ({
    expect,
  }) => {
    const v = await withPasskey();
    expect((await v.call.signIn()).verify?.status).toBe(200);
    const [held] = await v.authenticator.credentials();
    expect(held!.signCount).toBeGreaterThan(1);
    await v.authenticator.setSignCount(held!.credentialId, 0);
    const before = (await sessionsOf(v.user.id)).length;
    refused(await v.call.signIn());
    expect(await sessionsOf(v.user.id)).toHaveLength(before);
    await expect
      .poll(async () => (await events(v.user.id, 'passkeys.clone_suspected')).map((e) => e.details))
      .toEqual([expect.objectContaining({ passkey_id: v.passkey.id })]);
    await leave(v);
  });

  it('when a page on an origin the app does not allow runs the ceremonies (a relaying site), then registration and sign-in are 400 PASSKEY_INVALID and nothing is created', async ({
    expect,
  }) => {
    const v = await withPasskey();
    const phished = await v.page.goto(evil.page);
    expect(phished?.status()).toBe(200);
    // The same authenticator, on a page of another origin under the same RP ID: the browser signs, the app refuses.
    const signIn = await v.call.signIn();
    expect(userVerified(signIn)).toBe(true);
    refused(signIn);
    expect(await sessionsOf(v.user.id)).toHaveLength(1); // the one makeSession opened
    await expect.poll(async () => (await events(v.user.id, 'passkeys.sign_in_refused')).map((e) => e.details?.reason)).toEqual(['verification']);
    // Another user adds a passkey there: the authenticator makes one, the app stores nothing.
    const other = await visit({ at: evil });
    const add = await other.call.register(other.token, 'Phished');
    expect(add.credential?.id).toBeTruthy();
    refused(add);
    expect(await rowsOf(w.t, 'passkey_credentials', other.user.id)).toEqual([]);
    await expect.poll(async () => (await events(other.user.id, 'passkeys.registration_refused')).map((e) => e.details?.reason)).toEqual(['verification']);
    expect(await events(other.user.id, 'passkeys.added')).toEqual([]); // written in the transaction that would have stored it
    await leave(v);
    await leave(other);
  });

  it('when a two-factor user signs in with the passkey without user verification, then the session is pending', async ({ expect }) => {
    const v = await withPasskey({ user: { two_factor: true } });
    // The page asks for no UV (the authenticator could verify): the assertion comes with presence only.
    const r = await v.call.signIn('discouraged');
    expect(r.verify?.status, JSON.stringify(r)).toBe(200);
    expect(userVerified(r)).toBe(false);
    expect(r.verify?.body).toMatchObject({ success: false, requires_2fa: true });
    expect((await sessionsOf(v.user.id)).filter((s) => s.status === 'pending_2fa')).toHaveLength(1);
    expect((await v.call.get('/auth/session/current')).body).toMatchObject({ requires_2fa: true });
    expect((await v.call.get(P, r.verify!.body.session_id)).status).toBe(401);
    await leave(v);
  });
});

describe('passkeys and the second factor in Chromium', () => {
  it('when a two-factor user signs in with a user-verified passkey, then the session is full at once, the event saying passkey with uv', async ({ expect }) => {
    const v = await withPasskey({ user: { two_factor: true } });
    const r = await v.call.signIn();
    expect(r.verify?.status, JSON.stringify(r)).toBe(200);
    expect(userVerified(r)).toBe(true);
    expect(r.verify?.body).toMatchObject({ success: true, user: { id: v.user.id } });
    expect(r.verify?.body.requires_2fa).toBeFalsy();
    expect((await v.call.get('/auth/session/current')).body).toMatchObject({ success: true, requires_2fa: false, user: { id: v.user.id } });
    expect((await v.call.get(P, r.verify!.body.session_id)).status).toBe(200);
    await expect
      .poll(async () => (await events(v.user.id, 'sign_in.succeeded')).map((e) => e.details))
      .toEqual([expect.objectContaining({ method: 'passkey', uv: true })]);
    await leave(v);
  });

  it('when a two-factor user signs in without user verification, then the pending session finishes with the passkey as its second factor', async ({
    expect,
  }) => {
    const v = await withPasskey({ user: { two_factor: true } });
    const first = await v.call.signIn('discouraged');
    expect(userVerified(first)).toBe(false);
    expect(first.verify?.body).toMatchObject({ success: false, requires_2fa: true });
    const pending = first.verify!.body.session_id as string;
    expect((await v.call.get(P, pending)).status).toBe(401);

    const second = await v.call.secondFactor(pending, 'discouraged');
    expect(second.methods?.body.methods).toEqual(expect.arrayContaining([expect.objectContaining({ id: 'passkey', type: 'passkey' })]));
    expect(userVerified(second)).toBe(false);
    expect(second.verify?.status, JSON.stringify(second)).toBe(200);
    expect(second.verify?.body).toMatchObject({ success: true, session_activated: true, requires_2fa: false, method: 'passkey', session_id: pending });
    // The second request named this user's passkey (a modal request, not a discoverable one).
    expect(await v.call.gets()).toEqual([
      { mediation: null, allowCredentials: 0 },
      { mediation: null, allowCredentials: 1 },
    ]);
    expect((await v.call.get(P, pending)).status).toBe(200);
    expect((await v.call.get('/auth/session/current', pending)).body).toMatchObject({ requires_2fa: false, user: { id: v.user.id } });
    // One sign-in, when the second factor made the session full (its event names the module, as for every method).
    await expect.poll(async () => (await events(v.user.id, 'sign_in.succeeded')).map((e) => e.details?.method)).toEqual(['two_factor']);
    await leave(v);
  });
  it('when the second step is answered on a page of an origin the app does not allow, then it is 400 PASSKEY_INVALID and the session stays pending', async ({
    expect,
  }) => {
    const v = await withPasskey({ user: { two_factor: true } });
    const first = await v.call.signIn('discouraged');
    expect(first.verify?.body).toMatchObject({ success: false, requires_2fa: true });
    const pending = first.verify!.body.session_id as string;
    expect((await v.page.goto(evil.page))?.status()).toBe(200);
    const second = await v.call.secondFactor(pending);
    expect(second.credential?.id).toBeTruthy();
    refused(second);
    expect((await v.call.get(P, pending)).status).toBe(401);
    expect((await sessionsOf(v.user.id)).filter((s) => s.status === 'pending_2fa')).toHaveLength(1);
    expect(await events(v.user.id, 'sign_in.succeeded')).toEqual([]);
    await expect
      .poll(async () => (await events(v.user.id, 'sign_in.failed')).map((e) => e.details))
      .toEqual([expect.objectContaining({ method: 'two_factor', second_factor: 'passkey' })]);
    await leave(v);
  });
});
