import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../helpers/backend.js';
import { captureLog, startTestApp, TEST_BRIDGE_SECRET, TEST_ENV, type TestApp } from '../helpers/test-app.js';

/*
 * The real app, its log captured from the logger's destination stream, driven through the flows
 * that carry secrets; no secret may show up in the captured text. `t` logs at level trace (SQL
 * included); `info` at level info, as deployed (with an access line for every answer), writing
 * account mail to the default outbox.
 */

const PASSWORD = 'Sup3r-Secret-Passw0rd!';
const WRONG_PASSWORD = 'Wr0ng-But-Secret-Guess!';
const email = `logs.${randomUUID()}@example.test`;

const captured = captureLog();
let t: TestApp;
const infoLog = captureLog();
let info: TestApp;

beforeAll(async () => {
  t = await startTestApp({ env: { LOG_LEVEL: 'trace' }, logTo: captured.stream });
  // ACCESS_LOG_SLOW_MS=0: every answer counts as slow, so the 200s below have their access lines too.
  info = await startTestApp({ env: { LOG_LEVEL: 'info', ACCESS_LOG_SLOW_MS: '0' }, logTo: infoLog.stream });
});

afterAll(async () => {
  await t?.close();
  await info?.close();
});

async function call(method: string, p: string, body?: unknown, headers: Record<string, string> = {}) {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['Content-Type'] ??= 'application/json';
  }
  const res = await fetch(t.url + p, init);
  const text = await res.text();
  return { status: res.status, json: text.startsWith('{') ? JSON.parse(text) : null };
}

describe('secrets in logs', () => {
  it('when login, validation, bridge calls and bad input have been logged at trace level, then no password, session token or bridge secret is in the log', async () => {
    const reg = await call('POST', '/auth/register/public', { email, password: PASSWORD, name: 'Log' });
    expect(reg.status).toBe(200);
    expect((await call('POST', '/auth/login', { email, password: WRONG_PASSWORD })).status).toBe(401);
    const ok = await call('POST', '/auth/login', { email, password: PASSWORD });
    expect(ok.status).toBe(200);
    const token: string = ok.json.session_id ?? ok.json.sessionId;
    const regToken: string = reg.json.data.session_id;
    expect(token).toMatch(/^ses_/);

    // The token by every way it can travel.
    expect((await call('GET', '/auth/validation', undefined, { 'X-Session-ID': token })).status).toBe(200);
    expect((await call('GET', `/auth/validation?session_id=${token}`)).status).toBe(200);
    expect((await call('POST', '/auth/validation', { sessionId: token })).status).toBe(200);
    expect((await call('GET', '/auth/me', undefined, { Cookie: `session_id=${token}` })).status).toBe(200);
    expect((await call('POST', '/auth/bridge/validate', { session_id: token }, { 'X-Bridge-Secret': TEST_BRIDGE_SECRET })).status).toBe(200);
    expect((await call('POST', '/auth/bridge/validate', { session_id: token }, { 'X-Bridge-Secret': `${TEST_BRIDGE_SECRET}x` })).status).toBe(401);

    // Bad input that carries secrets.
    expect((await call('POST', '/auth/login', `{"email":"${email}","password":"${PASSWORD}"`)).status).toBe(400);
    expect((await call('POST', '/auth/register/public', { email: 'not-an-email', password: PASSWORD })).status).toBe(400);
    expect((await call('PUT', '/auth/user/me', { name: 'x'.repeat(10), password: PASSWORD }, { 'X-Session-ID': token })).status).toBeLessThan(500);
    expect((await call('POST', '/auth/logout', undefined, { 'X-Session-ID': regToken })).status).toBe(200);

    // A limiter command Redis refuses logs a warning (the fallback is used); it must not carry the key material either (Redis tier only).
    if (BACKEND === 'pg') {
      const key = `${t.env.REDIS_PREFIX}rl:default:127.0.0.1`;
      // Reset first: it drops this instance's lease of the key (src/limits/redis-limiter.ts), so the next hit asks Redis.
      await t.app.limiter.reset('default', '127.0.0.1');
      await t.app.redis!.set(key, 'wrong type');
      // A path of the default class, counted per address (a live session's reads have a budget of their own).
      expect((await call('GET', `/nope/default-class?session_id=${token}`)).status).toBe(404);
      await t.app.redis!.del(key);
    }

    // The access log line is written once the answer is sent: wait for the last request's.
    const last = BACKEND === 'pg' ? '"url":"/nope/default-class' : '"url":"/auth/logout"';
    await expect
      .poll(() =>
        captured
          .text()
          .split('\n')
          .some((l) => l.includes('request completed') && l.includes(last)),
      )
      .toBe(true);
    const log = captured.text();
    // The capture works and is broad: request lines and SQL are in it.
    expect(log).toContain('request completed');
    expect(log).toContain('"sql"');
    if (BACKEND === 'pg') expect(log).toContain('redis refused a command');
    expect(log).toContain('[redacted]');

    for (const secret of [PASSWORD, WRONG_PASSWORD, token, token.slice(4), regToken.slice(4), TEST_BRIDGE_SECRET, TEST_ENV.COOKIE_SECRET]) {
      expect(log.includes(secret), `log leaks ${secret.slice(0, 6)}…`).toBe(false);
    }
  });
});

describe('tokens in URLs', () => {
  it('when a reset token is checked through the legacy path form, or a login token arrives under an encoded query key, then neither is logged', async () => {
    const user = await info.app.services.users.create(
      { email: `logs.${Date.now()}@example.test`, password: 'Correct-Horse-42' },
      { actor: null, via: 'cli', verified: true },
    );
    const reset = await info.app.services.tokens.issue({ kind: 'password_reset', userId: user.id, identifier: user.email, channel: 'email', ttlSec: 600 });
    const login = await info.app.services.tokens.issue({ kind: 'login', userId: user.id, identifier: user.email, channel: 'email', ttlSec: 600 });

    const checked = await fetch(`${info.url}/auth/password-reset/validate/${reset.token}`);
    expect(checked.status).toBe(200);
    const signedIn = await fetch(`${info.url}/auth/token/validate?%74oken=${login.token}`);
    expect(signedIn.status).toBe(200);
    // Access log lines are written once the answer is sent.
    await expect.poll(() => infoLog.text()).toContain('/auth/token/validate?');
    const log = infoLog.text();

    expect(log).toContain('/auth/password-reset/validate/');
    expect(log).toContain('/auth/token/validate?');
    for (const secret of [reset.token, login.token, reset.token.slice(4, 24), login.token.slice(4, 24)]) expect(log).not.toContain(secret);
  });
});

describe('account mail written to the default outbox', () => {
  it('when reset, sign-in and verification mails are written, then the log names each kind and file but no link, token or code', async () => {
    const email = `outbox.${Date.now()}@example.test`;
    await info.app.services.users.create({ email, password: 'Correct-Horse-42' }, { actor: null, via: 'cli', verified: false });
    expect((await info.request('POST', '/auth/password-reset/request', { body: { email } })).status).toBe(200);
    expect((await info.request('POST', '/auth/token/login', { bridge: true, body: { identifier: email, type: 'email' } })).status).toBe(200);
    expect((await info.request('POST', '/auth/resend-verification', { body: { email } })).status).toBe(200);

    const dir = `${info.dataDir}/outbox`;
    const mailFiles = async () => (await readdir(dir).catch(() => [])).filter((f) => f.endsWith('.eml'));
    // The mails are written after the answers.
    await expect.poll(async () => (await mailFiles()).length).toBe(3);
    const files = await mailFiles();
    // Every token-looking thing the mails carry: links' query values and 6-digit codes.
    const secrets = new Set<string>();
    for (const f of files) {
      const eml = (await readFile(`${dir}/${f}`, 'utf8')).replace(/=\r?\n/g, '').replace(/=3D/g, '=');
      for (const m of eml.matchAll(/[?&](?:token|code)=([A-Za-z0-9_-]{6,})/g)) secrets.add(m[1]);
      for (const m of eml.matchAll(/\b(?:rst|vfy|lgn)_[A-Za-z0-9_-]{16,}/g)) secrets.add(m[0]);
    }
    expect(secrets.size).toBeGreaterThanOrEqual(3);
    const outboxLines = () =>
      infoLog
        .text()
        .split('\n')
        .filter((l) => l.includes('mail written to outbox'));
    await expect.poll(() => outboxLines().length).toBe(3);
    const log = infoLog.text();
    const lines = outboxLines();
    expect(lines.map((l) => JSON.parse(l).template).sort()).toEqual(expect.arrayContaining([expect.stringMatching(/reset/)]));
    for (const secret of secrets) expect(log).not.toContain(secret);
    expect(log).not.toMatch(/https?:\/\/[^"]*[?&](token|code)=/);
  });

  it('when a URL carries a token-like value under any parameter name, then the access log redacts it', async () => {
    const value = 'Zq8Xw3Lm9Pt2Rv7Ks4Nb';
    expect((await fetch(`${info.url}/health?continue=${value}&page=2`)).status).toBe(200);
    await expect.poll(() => infoLog.text()).toContain('continue=[redacted]&page=2');
    expect(infoLog.text()).not.toContain(value);
  });
});
