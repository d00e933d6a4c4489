import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../helpers/backend.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { makeSession } from '../helpers/factories.js';

/**
 * Cross-instance invalidation rides on Redis pub/sub, so the two-instance cases run on the pg backend
 * (PostgreSQL + Redis). The embedded default (SQLite, in-process bus) is documented as single-instance;
 * on that backend the same scenarios are proven on one instance instead.
 */

let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  a = await startTestApp();
  b = BACKEND === 'pg' ? await startTestApp({ sharing: a }) : a;
});
afterAll(async () => {
  if (b && b !== a) await b.close();
  await a?.close();
});

/** Local caches live 60 s, so passing within half a second proves the other instance was told. */
const atOnce = { timeout: 500, interval: 20 };

const validateOn = (app: TestApp, token: string) => app.request('POST', '/auth/bridge/validate', { bridge: true, body: { session_id: token } });

describe(BACKEND === 'pg' ? 'two instances sharing PostgreSQL and Redis' : 'the embedded default (one instance)', () => {
  it('when a session logs out on A, then B, which had it cached, refuses it at once', async () => {
    const { token } = await makeSession(a);
    expect((await validateOn(b, token)).status).toBe(200);
    const cached = await validateOn(b, token);
    expect(cached.body.cacheSource).toBe('ultra');
    expect((await a.request('POST', '/auth/logout', { session: token })).status).toBe(200);
    await expect.poll(async () => (await validateOn(b, token)).status, atOnce).toBe(401);
    expect((await b.request('GET', '/auth/validation', { session: token })).body.error).toBe('Invalid session');
  });

  it('when the profile is updated through A, then B serves the new data at once', async () => {
    const { token } = await makeSession(a, { name: 'Old' });
    const before = await b.request('GET', '/auth/user/me', { bridge: true, session: token });
    expect(before.body.user.name).toBe('Old');
    expect((await a.request('PUT', '/auth/user/me', { session: token, body: { name: 'New' } })).status).toBe(200);
    await expect.poll(async () => (await b.request('GET', '/auth/user/me', { bridge: true, session: token })).body.user?.name, atOnce).toBe('New');
  });

  it("when an admin on A revokes a user's sessions, then B refuses them at once", async () => {
    const admin = await makeSession(a, { user_type: 'admin' });
    const { user, token } = await makeSession(a);
    await validateOn(b, token);
    expect((await validateOn(b, token)).body.cached).toBe(true);
    const r = await a.request('DELETE', `/auth/admin/users/${user.id}/sessions`, { session: admin.token });
    expect(r.status).toBe(200);
    await expect.poll(async () => (await validateOn(b, token)).status, atOnce).toBe(401);
  });

  it("when a superadmin on A changes a user's role, then B refuses every one of the user's sessions at once", async () => {
    const admin = await makeSession(a, { user_type: 'superadmin' });
    const { user, token } = await makeSession(a);
    const other = (await a.app.services.sessions.create(user.id)).token;
    await validateOn(b, token);
    expect((await a.request('PUT', `/auth/admin/users/${user.id}`, { session: admin.token, body: { user_type: 'writer' } })).status).toBe(200);
    await expect.poll(async () => (await validateOn(b, token)).status, atOnce).toBe(401);
    expect((await validateOn(b, other)).status).toBe(401);
  });
});
