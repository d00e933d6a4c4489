import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_DEPTH, type AuthMode } from '../../src/http/define-route.js';
import { coreRoutes } from '../../src/http/routes/index.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail, userServiceFailingRevocation } from '../helpers/factories.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startTestApp, TEST_BRIDGE_SECRET, type TestApp } from '../helpers/test-app.js';
import { codeIn, mailTo, tokenIn } from './flows-helpers.js';

let sink: SmtpSink;
let t: TestApp;
beforeAll(async () => {
  sink = await startSmtpSink();
  t = await startTestApp({ env: { SMTP_URL: sink.url } });
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

const json = { 'Content-Type': 'application/json' };
const nested = (depth: number, leaf = '1') => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;

describe('after-event hooks cannot half-fail a change', () => {
  const boom = () => {
    throw new Error('module bug');
  };

  it('when an auth.registered handler throws, then registration still answers 200 with a working session and a retry is 400 EMAIL_TAKEN', async () => {
    const off = t.app.hooks.on('auth.registered', boom);
    try {
      const email = uniqueEmail('hook-reg');
      const r = await t.request('POST', '/auth/register/public', { body: { email, password: DEFAULT_PASSWORD } });
      expect(r.status).toBe(200);
      expect(r.body.data.user.email).toBe(email);
      expect((await t.request('GET', '/auth/me', { session: r.body.data.sessionId })).status).toBe(200);
      const again = await t.request('POST', '/auth/register/public', { body: { email, password: DEFAULT_PASSWORD } });
      expect(again.status).toBe(400);
      expect(again.body.code).toBe('EMAIL_TAKEN');
    } finally {
      off();
    }
  });

  it('when an auth.login handler throws, then the login still answers 200 with its session', async () => {
    const user = await makeUser(t);
    const off = t.app.hooks.on('auth.login', boom);
    try {
      const r = await t.request('POST', '/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD } });
      expect(r.status).toBe(200);
      expect((await t.request('GET', '/auth/me', { session: r.body.sessionId })).status).toBe(200);
    } finally {
      off();
    }
  });

  it('when a user.updated handler throws, then an admin disabling a user answers 200 and the user is locked out', async () => {
    const admin = await makeSession(t, { user_type: 'admin' });
    const victim = await makeSession(t);
    const off = t.app.hooks.on('user.updated', boom);
    try {
      const r = await t.request('PUT', `/auth/admin/users/${victim.user.id}`, { session: admin.token, body: { disabled: true } });
      expect(r.status).toBe(200);
    } finally {
      off();
    }
    expect((await t.request('GET', '/auth/me', { session: victim.token })).status).toBe(401);
  });
});

describe('a change cannot fail half-way', () => {
  // Disabling or deleting and the sign-out everywhere are one unit of work (as a password change is):
  // a failing revocation leaves nothing half done, and the admin is told (admin-users-unit-of-work.test.ts).
  it('when revoking the sessions fails while an admin disables or deletes a user, then the change rolls back whole and the admin is told', async () => {
    const admin = await makeUser(t, { user_type: 'admin' });
    const sessions = t.app.services.sessions;
    const failing = userServiceFailingRevocation(t);
    for (const action of ['disable', 'delete'] as const) {
      const victim = await makeSession(t);
      expect((await sessions.validate(victim.token)).user.id).toBe(victim.user.id);
      const change = action === 'disable' ? failing.adminUpdate(admin, victim.user.id, { disabled: true }) : failing.softDelete(admin, victim.user.id);
      await expect(change).rejects.toThrow('session store down');
      expect(await t.app.repos.users.findById(victim.user.id), action).toMatchObject({ disabled_at: null, deleted_at: null });
    }
  });
});

describe('deeply nested JSON', () => {
  it('when metadata nests thousands of levels deep (a 10 KB body), then the profile update is a 400, not a 500', async () => {
    const s = await makeSession(t);
    for (const depth of [40, 5000]) {
      const raw = `{"metadata":{"a":${nested(depth)}}}`;
      const r = await t.request('PUT', '/auth/user/me', { session: s.token, raw, headers: json });
      expect(r.status, `depth ${depth}`).toBe(400);
      expect(r.body.code).toBe('VALIDATION_ERROR');
    }
    const ok = await t.request('PUT', '/auth/user/me', { session: s.token, body: { metadata: { a: JSON.parse(nested(10)) } } });
    expect(ok.status).toBe(200);
  });

  it('when any JSON route gets a body nested past the limit, then it answers 400 before reading it', async () => {
    const s = await makeSession(t, { user_type: 'superadmin' });
    const raw = `{"email":"deep@example.test","password":${nested(MAX_BODY_DEPTH + 5000, '"x"')}}`;
    for (const [method, path, session] of [
      ['POST', '/auth/login', undefined],
      ['POST', '/auth/register/public', undefined],
      ['PUT', '/auth/user/me', s.token],
      ['POST', '/auth/admin/users', s.token],
      ['POST', '/auth/validation', undefined],
    ] as const) {
      const r = await t.request(method, path, { session, raw, headers: json });
      expect(r.status, `${method} ${path}`).toBe(400);
      expect(r.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    }
  });

  it('when a module route that sizes its input as JSON gets a deeply nested body, then it answers 400, not 500', async () => {
    await t.app.modules.hub.install(['onboarding'], { actor: 'review' });
    await t.app.modules.reload();
    const s = await makeSession(t);
    const raw = `{"data":{"answers":${nested(5000)}}}`;
    const r = await t.request('POST', '/api/v1/onboarding/steps/profile/complete', { session: s.token, raw, headers: json });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    const ok = await t.request('POST', '/api/v1/onboarding/steps/profile/complete', { session: s.token, body: { data: { answers: [[1]] } } });
    expect(ok.status).toBe(200);
  });
});

describe('single use under parallel requests', () => {
  it('when one reset link is completed by many requests at once, then exactly one succeeds', async () => {
    const user = await makeUser(t, { email: uniqueEmail('race-reset') });
    await t.request('POST', '/auth/password-reset/request', { body: { email: user.email } });
    const token = tokenIn(await mailTo(sink, user.email, /reset/i));
    const rs = await Promise.all(
      Array.from({ length: 8 }, (_, i) => t.request('POST', '/auth/password-reset/complete', { body: { token, password: `Fresh-Passw0rd-${i}x` } })),
    );
    expect(rs.filter((r) => r.status === 200)).toHaveLength(1);
    expect(rs.filter((r) => r.status === 400).every((r) => r.body.code === 'INVALID_TOKEN')).toBe(true);
  });

  it('when one login code is posted by many requests at once, then exactly one session is issued', async () => {
    const user = await makeUser(t, { email: uniqueEmail('race-code') });
    const asked = await t.request('POST', '/auth/token/login', { body: { identifier: user.email } });
    const code = codeIn((await mailTo(sink, user.email, /.*/)).text);
    const rs = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        t.request('POST', '/auth/token/validate', { body: i % 2 ? { token_id: asked.body.token_id, code } : { identifier: user.email, code } }),
      ),
    );
    expect(rs.filter((r) => r.status === 200)).toHaveLength(1);
    expect(await t.app.services.sessions.listForUser(user.id)).toHaveLength(1);
  });
});

describe('pending two-factor sessions', () => {
  const needsFullSession = (auth: AuthMode | ((c: never) => AuthMode)) => typeof auth === 'object' || auth === 'session' || auth === 'bridge+session';

  it('when a pending session (with the bridge secret) calls every core route that needs a full session, then each answers 401 TWO_FACTOR_REQUIRED', async () => {
    const user = await makeUser(t, { two_factor: true, user_type: 'superadmin' });
    const { token } = await t.app.services.sessions.create(user.id, { status: 'pending_2fa' });
    const routes = coreRoutes.filter((r) => needsFullSession(r.auth));
    expect(routes.length).toBeGreaterThan(20);
    for (const r of routes) {
      const path = r.path.replace(/:\w+/g, user.id);
      const res = await t.request(r.method.toUpperCase(), path, {
        session: token,
        headers: { 'X-Bridge-Secret': TEST_BRIDGE_SECRET },
        body: r.method === 'get' ? undefined : {},
      });
      expect(`${r.method} ${r.path} → ${res.status} ${res.body?.code}`).toBe(`${r.method} ${r.path} → 401 TWO_FACTOR_REQUIRED`);
    }
    // Still pending and still alive: the refusals did not end or promote it.
    const me = await t.request('GET', '/auth/me', { session: token });
    expect(me.body).toMatchObject({ success: false, requires_2fa: true });
  });
});

describe('repeated query parameters', () => {
  it('when a query parameter a route reads arrives twice (an array), then the answer is a 4xx JSON error, never a 500', async () => {
    const admin = await makeSession(t, { user_type: 'admin' });
    const cases: [string, string | undefined][] = [
      ['/auth/validation?session_id=a&session_id=b', undefined],
      ['/auth/user/me?session_id=a&session_id=b', undefined],
      ['/auth/admin/users?q=a&q=b', admin.token],
      ['/auth/admin/users?page=1&page=2&limit=5&limit=6', admin.token],
      ['/auth/token/validate?token=a&token=b', undefined],
      ['/auth/token/validate?token_id=a&token_id=b&code=1&code=2', undefined],
      ['/auth/token/verify?token=a&token=b', undefined],
    ];
    for (const [path, session] of cases) {
      const r = await t.request('GET', path, { session, bridge: true });
      expect(r.status, path).toBeGreaterThanOrEqual(400);
      expect(r.status, path).toBeLessThan(500);
      expect(r.body, path).toMatchObject({ success: false });
      expect(typeof r.body.error, path).toBe('string');
    }
  });
});

describe('identifiers: case, whitespace, unicode, length', () => {
  it('when an email is registered with capitals and spaces, then it is stored normalised and every variant finds the same account', async () => {
    const email = uniqueEmail('norm');
    const reg = await t.request('POST', '/auth/register/public', { body: { email: `  ${email.toUpperCase()}\t`, password: DEFAULT_PASSWORD } });
    expect(reg.status).toBe(200);
    expect(reg.body.data.user.email).toBe(email);
    const login = await t.request('POST', '/auth/login', { body: { email: ` ${email.toUpperCase()} `, password: DEFAULT_PASSWORD } });
    expect(login.status).toBe(200);
    const dup = await t.request('POST', '/auth/register/public', { body: { email: email.replace(/^./, (c) => c.toUpperCase()), password: DEFAULT_PASSWORD } });
    expect(dup.body.code).toBe('EMAIL_TAKEN');
  });

  it('when an email has look-alike, non-ASCII or control characters, then registration is a 400 and login a plain 401', async () => {
    for (const email of ['ｍail@example.test', 'mail@exämple.test', 'mail@example.test\u202e', 'İnfo@example.test', 'ma\til@example.test']) {
      const reg = await t.request('POST', '/auth/register/public', { body: { email, password: DEFAULT_PASSWORD } });
      expect(reg.status, JSON.stringify(email)).toBe(400);
      const login = await t.request('POST', '/auth/login', { body: { email, password: DEFAULT_PASSWORD } });
      expect(login.status, JSON.stringify(email)).toBe(401);
    }
  });

  it('when a string anywhere in the input holds a NUL character, then the answer is 400 VALIDATION_ERROR (SQLite cut the statement at it: 500)', async () => {
    const admin = await makeSession(t, { user_type: 'admin' });
    const nul = 'ma\u0000il';
    const cases: [string, string, unknown, string?][] = [
      ['POST', '/auth/login', { email: `${nul}@example.test`, password: DEFAULT_PASSWORD }],
      ['POST', '/auth/login', { user_name: nul, password: DEFAULT_PASSWORD }],
      ['POST', '/auth/password-reset/request', { email: `${nul}@example.test` }],
      ['POST', '/auth/resend-verification', { email: `${nul}@example.test` }],
      ['POST', '/auth/token/login', { identifier: `${nul}@example.test` }],
      ['POST', '/auth/token/validate', { token_id: nul, code: '123456' }],
      ['POST', '/auth/token/validate', { identifier: `${nul}@example.test`, code: '123456' }],
      ['POST', '/auth/password-change/admin', { user_id: nul, new_password: 'Another-Passw0rd-1' }, admin.token],
      ['GET', `/auth/admin/users?q=${encodeURIComponent(nul)}`, undefined, admin.token],
      ['PUT', '/auth/user/me', { metadata: { [nul]: nul } }, admin.token],
    ];
    for (const [method, path, body, session] of cases) {
      const r = await t.request(method, path, { body, session });
      expect(`${method} ${path} ${JSON.stringify(body)} → ${r.status} ${r.body?.code}`).toBe(
        `${method} ${path} ${JSON.stringify(body)} → 400 VALIDATION_ERROR`,
      );
    }
  });

  it('when identifiers are far longer than any real one, then each route answers a 4xx JSON error', async () => {
    const admin = await makeSession(t, { user_type: 'admin' });
    const huge = 'a'.repeat(20_000);
    const answers = [
      await t.request('POST', '/auth/login', { body: { email: `${huge}@example.test`, password: DEFAULT_PASSWORD } }),
      await t.request('POST', '/auth/login', { body: { email: 'x@example.test', password: huge } }),
      await t.request('GET', '/auth/me', { session: `ses_${huge}` }),
      await t.request('POST', '/auth/validation', { body: { sessionId: huge } }),
      await t.request('POST', '/auth/token/validate', { body: { token: huge } }),
      await t.request('POST', '/auth/token/validate', { body: { token_id: huge, code: '123456' } }),
      await t.request('POST', '/auth/password-reset/complete', { body: { token: huge, password: DEFAULT_PASSWORD } }),
      await t.request('GET', `/auth/password-reset/validate/${'a'.repeat(5000)}`),
      await t.request('GET', `/auth/admin/users/${'a'.repeat(5000)}`, { session: admin.token }),
      await t.request('POST', '/auth/password-change/admin', { session: admin.token, body: { user_id: huge, new_password: 'Another-Passw0rd-1' } }),
      await t.request('POST', '/auth/token/login', { body: { identifier: `${huge}@example.test` } }),
    ];
    for (const r of answers) {
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(typeof r.body.error).toBe('string');
    }
  });
});
