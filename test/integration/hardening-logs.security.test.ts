import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../helpers/backend.js';
import { captureLog, startTestApp, TEST_BRIDGE_SECRET, TEST_ENV, type TestApp } from '../helpers/test-app.js';

/*
 * The real app at log level trace (SQL included), its log captured from the logger's destination
 * stream, driven through the flows that carry secrets; no secret may show up in the captured text.
 */

const PASSWORD = 'Sup3r-Secret-Passw0rd!';
const WRONG_PASSWORD = 'Wr0ng-But-Secret-Guess!';
const email = `logs.${randomUUID()}@example.test`;

const captured = captureLog();
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ env: { LOG_LEVEL: 'trace' }, logTo: captured.stream });
});

afterAll(async () => {
  await t?.close();
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
      await t.app.redis!.set(key, 'wrong type');
      // A path of the default class, counted per address (a live session's reads have a budget of their own).
      expect((await call('GET', `/nope/default-class?session_id=${token}`)).status).toBe(404);
      await t.app.redis!.del(key);
    }

    await new Promise((r) => setTimeout(r, 50));
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
