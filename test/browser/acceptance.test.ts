import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awayFromStepEdge, TF, totpNow } from '../../modules/two-factor/test/helpers.js';
import { BACKEND, provisionPg, type ProvisionedBackend } from '../helpers/backend.js';
import { addVirtualAuthenticator, launchChromium } from '../helpers/chromium.js';
import { LISTENING, removeTempDirs, ROOT, runCli, startCli, stopStartedClis, tempDir, type CliResult } from '../helpers/cli.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { expectCleanPage, openPage, signInOnPage } from '../helpers/web-browser.js';

/*
 * Issue 27's "done means", as one story on the real built CLI (`npm test` builds first): the commands
 * `npm run quickstart` runs (read from package.json, so this follows it) and the superadmin it prints,
 * who makes the user (and a dozen like them) through the admin API. Then, in Chromium: the user adds a
 * passkey on /account and their app signs in through the API and turns TOTP on; the superadmin at /admin
 * finds the user, revokes the app's session and resets their 2FA; the user signs in at /login through
 * the passkey autofill, and /account no longer lists the revoked session, whose next validation is 401. On SQLite, and on PostgreSQL + Redis
 * (a database and key prefix of its own) in the browser:pg project.
 *
 * The quickstart installs the two-factor and passkeys modules and sets a public URL on `localhost`
 * (WebAuthn refuses an IP address as relying party). Here the port is the CLI's choice (PORT=0) and the
 * public address is a relay on a port taken first, known before `serve` starts (PUBLIC_URL over init's).
 */

let browser: Browser;
let backend: ProvisionedBackend | null = null;
let front: TcpProxy;
let origin: string;
let env: Record<string, string>;

/** Runs one CLI command of the story in the story's data dir and backend; a non-zero exit fails with its output. */
async function gatehouse(args: string[]): Promise<CliResult> {
  const r = await runCli(args, { env });
  expect(r.code, `gatehouse ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r;
}

/** The `node bin/gatehouse …` commands of package.json's quickstart script, as argument lists. */
function quickstartCommands(): string[][] {
  const script = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.quickstart;
  return script
    .split('&&')
    .map((c) => c.trim())
    .filter((c) => c.startsWith('node bin/gatehouse '))
    .map((c) => c.slice('node bin/gatehouse '.length).split(/\s+/));
}

/** One JSON call to the running server, as an app's backend makes it. */
async function api(method: string, p: string, opts: { session?: string; body?: unknown; agent?: string } = {}) {
  const headers: Record<string, string> = { 'user-agent': opts.agent ?? 'acceptance-test (node)' };
  if (opts.session) headers['x-session-id'] = opts.session;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(origin + p, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

const APP_AGENT = 'AcmeShop/2.3 (Android 14) okhttp/4.12.0';

beforeAll(async () => {
  if (!existsSync(path.join(ROOT, 'dist', 'entry', 'cli.js'))) throw new Error('the CLI is not built: run `npm run build` first (npm test does)');
  front = await startTcpProxy();
  origin = `http://localhost:${front.port}`;
  [browser, backend] = await Promise.all([launchChromium(), BACKEND === 'pg' ? provisionPg() : null]);
  env = { GATEHOUSE_DATA_DIR: tempDir('gh-accept-'), ...(backend?.env ?? {}) };
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await stopStartedClis();
  await front?.close();
  await backend?.drop();
  removeTempDirs();
});

describe('issue 27 acceptance: quickstart, the console, the passkey autofill, the account page', () => {
  it('the printed superadmin revokes a user’s app session and resets their 2FA at /admin; the user signs in with a passkey and the session is gone', async () => {
    // --- The quickstart's commands, with the two operator steps before `serve`.
    const commands = quickstartCommands();
    expect(commands[0]?.[0]).toBe('init');
    expect(commands.at(-1)?.[0]).toBe('serve');
    const init = await gatehouse(commands[0]!);
    for (const c of commands.slice(1, -1)) await gatehouse(c);
    const admin = {
      email: /superadmin: (\S+) created/.exec(init.stdout)?.[1] ?? '',
      password: /password:\s+(\S+)\s+\(shown once/.exec(init.stdout)?.[1] ?? '',
    };
    expect(admin.email, init.stdout).toBe('admin@example.com');
    expect(init.stderr).toContain(BACKEND === 'pg' ? 'Database reachable (PostgreSQL at' : 'Database reachable (SQLite at');
    expect(admin.password.length, init.stdout).toBeGreaterThanOrEqual(16);
    expect(commands.some((c) => c.join(' ').startsWith('module install two-factor passkeys'))).toBe(true);
    const serve = startCli(commands.at(-1)!, { env: { ...env, PORT: '0', PUBLIC_URL: origin } });
    const [, url] = await serve.waitFor(LISTENING);
    await front.target(Number(new URL(url!).port));

    // The user and others like them (so the admin has to search), made through the admin API with the printed password.
    const adminApi = (await api('POST', '/auth/login', { body: { email: admin.email, password: admin.password } })).body.session_id as string;
    expect(adminApi).toBeTruthy();
    const user = { email: 'una.tester@example.com', password: 'Una-Tester-pass-27' };
    const people = [
      { ...user, name: 'Una Tester' },
      ...Array.from({ length: 12 }, (_, i) => ({ email: `una.decoy${i}@example.com`, password: user.password, name: `Una Decoy ${i}` })),
    ];
    for (const body of people) {
      const r = await api('POST', '/auth/admin/users', { session: adminApi, body });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }

    // --- The user's laptop: a password sign-in at /login, a passkey added on /account (its browser session stays).
    const { g: laptop, page: lp } = await openPage(browser, { viewport: { width: 1280, height: 900 } });
    const laptopKey = await addVirtualAuthenticator(lp);
    await signInOnPage(lp, origin, user.email, { password: user.password });
    const add = lp.getByRole('button', { name: 'Add a passkey' });
    await expect.poll(() => add.isEnabled()).toBe(true);
    await lp.locator('#pk-new-name').fill('Laptop');
    await Promise.all([lp.waitForURL(`${origin}/account?done=passkey_added#passkey-list`), add.click()]);
    const [passkey] = await laptopKey.credentials();
    expect(passkey?.isResidentCredential).toBe(true);

    // --- The user's app: a session of its own through the API, then TOTP turned on with it.
    const appSession = (await api('POST', '/auth/login', { body: { email: user.email, password: user.password }, agent: APP_AGENT })).body.session_id as string;
    expect((await api('GET', '/auth/validation', { session: appSession })).status).toBe(200);
    const setup = await api('POST', `${TF}/totp/setup`, { session: appSession, body: {} });
    expect(setup.status, JSON.stringify(setup.body)).toBe(200);
    await awayFromStepEdge();
    const verify = await api('POST', `${TF}/verify`, {
      session: appSession,
      body: { method_id: setup.body.method_id, code: totpNow(setup.body.otpauth_url), action: 'setup' },
    });
    expect(verify.status, JSON.stringify(verify.body)).toBe(200);
    expect((await api('POST', `${TF}/toggle`, { session: appSession, body: { two_factor_enabled: true } })).body.two_factor_enabled).toBe(true);

    // --- The superadmin, in a browser of their own: /admin sends them to /login and back.
    const { g: desk, page: ap } = await openPage(browser, { viewport: { width: 1280, height: 900 } });
    await ap.goto(`${origin}/admin`);
    expect(ap.url()).toBe(`${origin}/login?return_to=${encodeURIComponent('/admin')}`);
    await signInOnPage(ap, origin, admin.email, { password: admin.password, open: false, lands: `${origin}/admin` });
    await Promise.all([ap.waitForURL(`${origin}/admin/users`), ap.getByRole('link', { name: 'Users', exact: true }).click()]);
    await ap.getByLabel(/Search users/).fill('una.tester');
    await expect.poll(() => ap.locator('[data-user-link]').count()).toBe(1);
    await Promise.all([ap.waitForURL(/\/admin\/users\/[0-9a-f-]{36}$/), ap.locator('[data-user-link]').click()]);
    const userId = new URL(ap.url()).pathname.split('/').pop()!;
    expect(await ap.getByRole('heading', { level: 1 }).innerText()).toBe(user.email);
    // Two sessions: the laptop's Chrome and the app (an okhttp client, shown as an Android app).
    expect(await ap.locator('[data-session]').count()).toBe(2);
    const appRow = ap.locator('[data-session]', { hasText: 'Android app' });
    expect(await appRow.count()).toBe(1);
    await Promise.all([ap.waitForURL(/done=revoked/), appRow.getByRole('button', { name: /Revoke the session/ }).click()]);
    expect(await ap.locator('[data-session]').count()).toBe(1);
    expect((await api('GET', '/auth/validation', { session: appSession })).status).toBe(401);
    expect(await ap.locator('[data-two-factor]').innerText()).toBe('on');
    await Promise.all([ap.waitForURL(/done=two_factor_reset/), ap.locator('[data-reset-two-factor]').click()]);
    expect(await ap.locator('[data-two-factor]').innerText()).toBe('off');
    await expectCleanPage(desk, ap);

    // --- The user's phone, holding the same (synced) passkey: /login's autofill signs in without typing.
    const { g: phone, page: pp } = await openPage(browser, { viewport: { width: 320, height: 640 } });
    const phoneKey = await addVirtualAuthenticator(pp);
    await phoneKey.cdp.send('WebAuthn.addCredential', { authenticatorId: phoneKey.authenticatorId, credential: passkey as never });
    await pp.goto(`${origin}/login`);
    await pp.waitForURL(`${origin}/account`);
    expect(await pp.locator('[data-user-name]').innerText()).toBe('Una Tester');
    const sessions = pp.locator('[data-session]');
    expect(await sessions.count()).toBe(2); // this phone and the laptop
    expect(await pp.locator('[data-session]', { hasText: 'AcmeShop' }).count()).toBe(0);
    expect(await pp.locator('[data-session]', { hasText: 'This device' }).count()).toBe(1);
    expect((await api('GET', '/auth/validation', { session: appSession })).status).toBe(401);
    await expectCleanPage(phone, pp);

    // The audit trail: the admin is the actor of the revocation and of the reset; the phone's sign-in was the passkey's.
    const adminId = ((await api('GET', '/auth/me', { session: adminApi })).body.data.user as { id: string }).id;
    const trail = await api('GET', `/auth/admin/audit-events?user_id=${userId}&limit=100`, { session: adminApi });
    expect(trail.status, JSON.stringify(trail.body)).toBe(200);
    const events = trail.body.data.events as { type: string; actor: { id?: string } | null; details: Record<string, unknown> }[];
    expect(events.find((e) => e.type === 'session.revoked')).toMatchObject({ actor: { id: adminId }, details: { by: 'admin', count: 1 } });
    expect(events.find((e) => e.type === 'two_factor.reset')).toMatchObject({ actor: { id: adminId } });
    expect(events.find((e) => e.type === 'sign_in.succeeded')).toMatchObject({ details: { method: 'passkey' } });
    for (const g of [laptop, desk, phone]) await g.close();
  }, 240_000);
});
