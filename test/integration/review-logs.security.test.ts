import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLog, startTestApp, type TestApp } from '../helpers/test-app.js';

/* The access log of the real app, captured: one-time tokens must not reach it, wherever in the URL they ride. */

const captured = captureLog();
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ env: { LOG_LEVEL: 'info' }, logTo: captured.stream });
});

afterAll(async () => t?.close());

describe('tokens in URLs', () => {
  it('when a reset token is checked through the legacy path form, or a login token arrives under an encoded query key, then neither is logged', async () => {
    const user = await t.app.services.users.create({ email: `logs.${Date.now()}@example.test`, password: 'Correct-Horse-42' }, { actor: null, verified: true });
    const reset = await t.app.services.tokens.issue({ kind: 'password_reset', userId: user.id, identifier: user.email, channel: 'email', ttlSec: 600 });
    const login = await t.app.services.tokens.issue({ kind: 'login', userId: user.id, identifier: user.email, channel: 'email', ttlSec: 600 });

    const checked = await fetch(`${t.url}/auth/password-reset/validate/${reset.token}`);
    expect(checked.status).toBe(200);
    const signedIn = await fetch(`${t.url}/auth/token/validate?%74oken=${login.token}`);
    expect(signedIn.status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));
    const log = captured.text();

    expect(log).toContain('/auth/password-reset/validate/');
    expect(log).toContain('/auth/token/validate?');
    for (const secret of [reset.token, login.token, reset.token.slice(4, 24), login.token.slice(4, 24)]) expect(log).not.toContain(secret);
  });
});

describe('account mail written to the default outbox', () => {
  it('when reset, sign-in and verification mails are written, then the log names each kind and file but no link, token or code', async () => {
    const email = `outbox.${Date.now()}@example.test`;
    await t.app.services.users.create({ email, password: 'Correct-Horse-42' }, { actor: null, verified: false });
    expect((await t.request('POST', '/auth/password-reset/request', { body: { email } })).status).toBe(200);
    expect((await t.request('POST', '/auth/token/login', { bridge: true, body: { identifier: email, type: 'email' } })).status).toBe(200);
    expect((await t.request('POST', '/auth/resend-verification', { body: { email } })).status).toBe(200);

    const { readdir, readFile } = await import('node:fs/promises');
    const dir = `${t.dataDir}/outbox`;
    const until = Date.now() + 5000;
    let files: string[] = [];
    while ((files = (await readdir(dir).catch(() => [])).filter((f) => f.endsWith('.eml'))).length < 3 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(files).toHaveLength(3);
    // Every token-looking thing the mails carry: links' query values and 6-digit codes.
    const secrets = new Set<string>();
    for (const f of files) {
      const eml = (await readFile(`${dir}/${f}`, 'utf8')).replace(/=\r?\n/g, '').replace(/=3D/g, '=');
      for (const m of eml.matchAll(/[?&](?:token|code)=([A-Za-z0-9_-]{6,})/g)) secrets.add(m[1]);
      for (const m of eml.matchAll(/\b(?:rst|vfy|lgn)_[A-Za-z0-9_-]{16,}/g)) secrets.add(m[0]);
    }
    expect(secrets.size).toBeGreaterThanOrEqual(3);
    await new Promise((r) => setTimeout(r, 100));
    const log = captured.text();
    const lines = log.split('\n').filter((l) => l.includes('mail written to outbox'));
    expect(lines).toHaveLength(3);
    expect(lines.map((l) => JSON.parse(l).template).sort()).toEqual(expect.arrayContaining([expect.stringMatching(/reset/)]));
    for (const secret of secrets) expect(log).not.toContain(secret);
    expect(log).not.toMatch(/https?:\/\/[^"]*[?&](token|code)=/);
  });

  it('when a URL carries a token-like value under any parameter name, then the access log redacts it', async () => {
    const value = 'Zq8Xw3Lm9Pt2Rv7Ks4Nb';
    expect((await fetch(`${t.url}/health?continue=${value}&page=2`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));
    const log = captured.text();
    expect(log).not.toContain(value);
    expect(log).toContain('continue=[redacted]&page=2');
  });
});
