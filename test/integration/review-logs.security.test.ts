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
