import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND } from '../helpers/backend.js';
import { makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * A user's own sessions over the API (GET /auth/user/me/sessions, DELETE …/:id, POST …/revoke-others):
 * the account page's list and actions, through the same services. On PostgreSQL + Redis a second
 * instance sharing them proves that a revoked session is refused there at once; on the embedded
 * default (one instance, in-process bus) the same checks run on the one instance.
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

/** Local caches live 60 s, so a refusal within half a second proves the other instance was told. */
const atOnce = { timeout: 500, interval: 20 };
const validateOn = (app: TestApp, token: string) => app.request('POST', '/auth/bridge/validate', { bridge: true, body: { session_id: token } });
const events = async (userId: string, type: string) => (await a.app.services.audit.list({ userId, types: [type], limit: 50 })).events;
const SESSION_FIELDS = ['id', 'sessionPrefix', 'ipAddress', 'userAgent', 'userDevice', 'lastUsedAt', 'createdAt', 'expiresAt', 'status', 'current'];

async function userWithSessions(n: number) {
  const user = await makeUser(a);
  const sessions = [];
  for (let i = 0; i < n; i++) sessions.push(await a.app.services.sessions.create(user.id, { ip: `10.0.0.${i + 1}`, userAgent: `Device ${i}` }));
  return { user, sessions };
}

describe(`own sessions over the API (${BACKEND})`, () => {
  it("when a user lists their sessions, then each active one has the admin detail's fields and its public id, the caller's own is current, and no token, hash, pending or stranger's session appears", async () => {
    const { user, sessions } = await userWithSessions(3);
    await a.app.services.sessions.create(user.id, { status: 'pending_2fa', userAgent: 'Half signed in' });
    const stranger = await makeSession(a, { email: uniqueEmail('stranger') });
    const r = await a.request('GET', '/auth/user/me/sessions', { session: sessions[1].token });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    const list = r.body.data.sessions as Record<string, unknown>[];
    expect(r.body.data.sessionCount).toBe(3);
    expect(list.map((s) => s.id).sort()).toEqual(sessions.map((s) => s.session.id).sort());
    for (const s of list) {
      expect(Object.keys(s).sort()).toEqual([...SESSION_FIELDS].sort());
      expect(s.status).toBe('active');
    }
    expect(list[0]).toMatchObject({ id: sessions[1].session.id, current: true, ipAddress: '10.0.0.2', userAgent: 'Device 1' });
    expect(list.filter((s) => s.current)).toHaveLength(1);
    for (const { token, session } of sessions) {
      expect(r.text).not.toContain(token);
      expect(r.text).not.toContain(session.token_hash);
    }
    expect(r.text).not.toContain('Half signed in');
    expect(r.text).not.toContain(stranger.user.id);
  });

  it('when a user ends one of their other sessions, then it is refused at once (on another instance too), the rest live, and session.revoked says by: user', async () => {
    const { user, sessions } = await userWithSessions(3);
    const [mine, doomed, kept] = sessions;
    // Cached on B before the revocation.
    expect((await validateOn(b, doomed.token)).status).toBe(200);
    expect((await validateOn(b, doomed.token)).body.cached).toBe(true);
    const r = await a.request('DELETE', `/auth/user/me/sessions/${doomed.session.id}`, { session: mine.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, message: 'Session revoked' });
    await expect.poll(async () => (await validateOn(b, doomed.token)).status, atOnce).toBe(401);
    expect((await b.request('GET', '/auth/validation', { session: doomed.token })).status).toBe(401);
    expect((await validateOn(b, kept.token)).status).toBe(200);
    expect((await validateOn(b, mine.token)).status).toBe(200);
    const listed = await a.request('GET', '/auth/user/me/sessions', { session: mine.token });
    expect(listed.body.data.sessions.map((s: { id: string }) => s.id).sort()).toEqual([mine.session.id, kept.session.id].sort());
    const [e] = await events(user.id, 'session.revoked');
    expect(e).toMatchObject({ actor: { id: user.id }, details: { by: 'user', count: 1 } });
  });

  it("when the id is another user's, unknown, or this very session, then nothing ends: 404 alike for the first two (existence not told), 400 for this one", async () => {
    const { user, sessions } = await userWithSessions(1);
    const stranger = await makeSession(a, { email: uniqueEmail('stranger') });
    const theirs = (await a.app.services.users.listSessions(stranger.user.id))[0].id;
    const foreign = await a.request('DELETE', `/auth/user/me/sessions/${theirs}`, { session: sessions[0].token });
    const unknown = await a.request('DELETE', `/auth/user/me/sessions/${randomUUID()}`, { session: sessions[0].token });
    expect([foreign.status, unknown.status]).toEqual([404, 404]);
    expect(foreign.body).toEqual(unknown.body);
    expect(foreign.body).toMatchObject({ success: false, code: 'NOT_FOUND' });
    expect((await validateOn(a, stranger.token)).status).toBe(200);
    const self = await a.request('DELETE', `/auth/user/me/sessions/${sessions[0].session.id}`, { session: sessions[0].token });
    expect(self.status).toBe(400);
    expect(self.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    expect(self.body.error).toContain('/auth/logout');
    expect((await validateOn(a, sessions[0].token)).status).toBe(200);
    expect(await events(user.id, 'session.revoked')).toEqual([]);
  });

  it('when the path is not a session id, then 400 VALIDATION_ERROR naming id, never a 500', async () => {
    const { sessions } = await userWithSessions(1);
    for (const bad of ['not%20an%20id', 'x'.repeat(65), '..%2F..%2Fetc', "1'%20OR%20'1'%3D'1", '%00']) {
      const r = await a.request('DELETE', `/auth/user/me/sessions/${bad}`, { session: sessions[0].token });
      expect(r.status, bad).toBe(400);
      expect(r.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
      expect(JSON.stringify(r.body.details ?? r.body.error), bad).toContain('id');
    }
    expect((await validateOn(a, sessions[0].token)).status).toBe(200);
  });

  it('when a user signs out everywhere else, then every other session is refused at once (on another instance too), this one lives, and one session.revoked carries the count', async () => {
    const { user, sessions } = await userWithSessions(4);
    const [mine, ...others] = sessions;
    for (const o of others) await validateOn(b, o.token);
    const r = await a.request('POST', '/auth/user/me/sessions/revoke-others', { session: mine.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, data: { revoked: 3 } });
    for (const o of others) await expect.poll(async () => (await validateOn(b, o.token)).status, atOnce).toBe(401);
    expect((await validateOn(b, mine.token)).status).toBe(200);
    const listed = await a.request('GET', '/auth/user/me/sessions', { session: mine.token });
    expect(listed.body.data.sessions).toEqual([expect.objectContaining({ id: mine.session.id, current: true })]);
    const [e] = await events(user.id, 'session.revoked');
    expect(e).toMatchObject({ actor: { id: user.id }, details: { by: 'user', count: 3 } });
    const again = await a.request('POST', '/auth/user/me/sessions/revoke-others', { session: mine.token });
    expect(again.body).toMatchObject({ success: true, data: { revoked: 0 } });
    expect(await events(user.id, 'session.revoked')).toHaveLength(1);
  });

  it('when the session is pending its second factor, missing or dead, then every route answers 401 and nothing ends', async () => {
    const { user, sessions } = await userWithSessions(1);
    const pending = await a.app.services.sessions.create(user.id, { status: 'pending_2fa' });
    const calls = [
      ['GET', '/auth/user/me/sessions'],
      ['DELETE', `/auth/user/me/sessions/${sessions[0].session.id}`],
      ['POST', '/auth/user/me/sessions/revoke-others'],
    ] as const;
    for (const [method, path] of calls) {
      const half = await a.request(method, path, { session: pending.token });
      expect([half.status, half.body.code], `${method} ${path}`).toEqual([401, 'TWO_FACTOR_REQUIRED']);
      expect((await a.request(method, path)).status, `${method} ${path} without a session`).toBe(401);
      expect((await a.request(method, path, { session: 'ses_not-a-session' })).status, `${method} ${path} with a dead one`).toBe(401);
    }
    expect((await validateOn(a, sessions[0].token)).status).toBe(200);
    expect(await events(user.id, 'session.revoked')).toEqual([]);
  });

  it('when the OpenAPI document is read, then the three routes are in it with session auth and the default limit class', async () => {
    const doc = (await a.request('GET', '/openapi.json')).body;
    const ops = [
      doc.paths['/auth/user/me/sessions'].get,
      doc.paths['/auth/user/me/sessions/{id}'].delete,
      doc.paths['/auth/user/me/sessions/revoke-others'].post,
    ];
    for (const op of ops) expect(op).toMatchObject({ 'x-gatehouse-auth': 'session', 'x-gatehouse-rate-limit': 'default' });
    expect(doc.paths['/auth/user/me/sessions/{id}'].delete.parameters[0]).toMatchObject({ name: 'id', in: 'path', required: true });
  });
});

describe(`own sessions: rate limits (${BACKEND})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_DEFAULT: '3/1m' } });
  });
  afterAll(async () => t?.close());

  it('when a client keeps calling, then like other authenticated writes it meets the default class: 429 with Retry-After, and the session it aimed at lives', async () => {
    const { user, token } = await makeSession(t);
    const other = await t.app.services.sessions.create(user.id, { userAgent: 'target' });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await t.request('DELETE', `/auth/user/me/sessions/${randomUUID()}`, { session: token }));
    expect(answers.slice(0, 3).map((r) => r.status)).toEqual([404, 404, 404]);
    expect(answers[3].status).toBe(429);
    expect(Number(answers[3].headers.get('retry-after'))).toBeGreaterThan(0);
    const refused = await t.request('DELETE', `/auth/user/me/sessions/${other.session.id}`, { session: token });
    expect(refused.status).toBe(429);
    expect((await t.request('POST', '/auth/bridge/validate', { bridge: true, body: { session_id: other.token } })).status).toBe(200);
  });
});
