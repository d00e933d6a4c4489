import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors/app-error.js';
import { appWithMail } from '../helpers/app-with-mail.js';
import { DEFAULT_PASSWORD, makeUser, uniqueEmail } from '../helpers/factories.js';
import { mailTo, tokenIn } from './flows-helpers.js';

const { t, smtp: sink } = appWithMail();

const passwordLogin = (email: string) => t.request('POST', '/auth/login', { body: { email, password: DEFAULT_PASSWORD } });

async function tokenLogin(email: string) {
  expect((await t.request('POST', '/auth/token/login', { body: { identifier: email, type: 'email' } })).status).toBe(200);
  const mail = await mailTo(sink, email, /./);
  return t.request('POST', '/auth/token/validate', { body: { token: tokenIn(mail) } });
}

describe('one sign-in seam', () => {
  it('when a before hook refuses, then password and token login both answer its error and open no session', async () => {
    const user = await makeUser(t, { email: uniqueEmail('seam-refuse'), is_verified: true });
    const seen: string[] = [];
    const off = t.app.hooks.on(
      'auth.sign_in.before',
      ({ method }) => {
        seen.push(method);
        throw new AppError(403, 'ACCOUNT_LOCKED', 'Locked by policy');
      },
      'test',
      ({ user: u }) => u.id === user.id,
    );
    try {
      const pw = await passwordLogin(user.email);
      expect(pw.status).toBe(403);
      expect(pw.body).toMatchObject({ success: false, code: 'ACCOUNT_LOCKED', error: 'Locked by policy' });
      const tl = await tokenLogin(user.email);
      expect(tl.status).toBe(403);
      expect(tl.body.code).toBe('ACCOUNT_LOCKED');
      expect(seen).toEqual(['password', 'token-login']);
      expect(await t.app.services.sessions.listForUser(user.id)).toEqual([]);
      // The matcher keeps the hook off everyone else.
      const other = await makeUser(t, { email: uniqueEmail('seam-other') });
      expect((await passwordLogin(other.email)).status).toBe(200);
    } finally {
      off();
    }
  });

  it('when the user has two-factor on, then every way in gives a pending session with the methods the hooks offer', async () => {
    const user = await makeUser(t, { email: uniqueEmail('seam-2fa'), is_verified: true, two_factor: true });
    const off = t.app.hooks.on('auth.two_factor.methods', ({ methods, method, session }) => {
      methods.push({ type: 'test', via: method, pending: session?.status });
    });
    try {
      const pw = await passwordLogin(user.email);
      expect(pw.status).toBe(200);
      expect(pw.body).toMatchObject({ success: false, requires_2fa: true, available_methods: [{ type: 'test', via: 'password', pending: 'pending_2fa' }] });
      const tl = await tokenLogin(user.email);
      expect(tl.body).toMatchObject({ requires_2fa: true, available_methods: [{ type: 'test', via: 'token-login', pending: 'pending_2fa' }] });
      // A pending session cannot act as a full one.
      await expect(t.app.services.sessions.validate(pw.body.sessionId)).rejects.toMatchObject({ code: 'TWO_FACTOR_REQUIRED' });
      await expect(t.app.services.sessions.validate(tl.body.sessionId)).rejects.toMatchObject({ code: 'TWO_FACTOR_REQUIRED' });
    } finally {
      off();
    }
  });

  it('when a full session opens, then auth.login says which way the user came in', async () => {
    const user = await makeUser(t, { email: uniqueEmail('seam-after'), is_verified: true });
    const methods: string[] = [];
    const off = t.app.hooks.on(
      'auth.login',
      ({ method, session }) => void methods.push(`${method}:${session.status}`),
      'test',
      ({ user: u }) => u.id === user.id,
    );
    try {
      expect((await passwordLogin(user.email)).status).toBe(200);
      expect((await tokenLogin(user.email)).status).toBe(200);
      expect(methods).toEqual(['password:active', 'token-login:active']);
    } finally {
      off();
    }
  });
});
