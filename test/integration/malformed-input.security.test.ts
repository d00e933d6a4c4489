import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_DEPTH } from '../../src/http/define-route.js';
import { DEFAULT_PASSWORD, makeSession, uniqueEmail } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/* Input no client should send (deep nesting, repeated parameters, odd or huge identifiers) gets a 4xx JSON error, never a 500. */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const json = { 'Content-Type': 'application/json' };
const nested = (depth: number, leaf = '1') => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;

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
