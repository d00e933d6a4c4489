import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coreRoutes } from '../../src/http/routes/index.js';
import type { RouteDef } from '../../src/http/define-route.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { DEFAULT_PASSWORD, makeSession, makeUser, uniqueEmail } from '../helpers/factories.js';

/**
 * Walks every core route as a superadmin carrying the bridge secret too (so every auth mode lets the
 * call through), each call with fresh users and sessions, and proves no answer carries a secret or a
 * hidden column, nor the token of any session but the caller's own.
 */

let t: TestApp;
/** A session no route targets: its token must never appear anywhere. */
let bystander: string;
beforeAll(async () => {
  // Social login on (no provider configured: nothing calls out), so its routes answer for real instead of 503 "off".
  t = await startTestApp({ env: { SOCIAL_LOGIN: 'true' } });
  bystander = (await makeSession(t)).token;
});
afterAll(async () => t?.close());

interface Ctx {
  targetEmail: string;
  callerToken: string;
}

const newUserBody = () => ({ email: uniqueEmail('leak'), password: DEFAULT_PASSWORD, name: 'Leak' });
/** Bodies that make the user-returning routes succeed; every other route gets `{}`. */
const BODIES: Record<string, (c: Ctx) => unknown> = {
  'POST /auth/login': (c) => ({ email: c.targetEmail, password: DEFAULT_PASSWORD }),
  'POST /auth/register/public': newUserBody,
  'POST /auth/register': newUserBody,
  'POST /auth/admin/users': newUserBody,
  'POST /auth/users': newUserBody,
  'PUT /auth/user/me': () => ({ name: 'Leak' }),
  'PUT /auth/profile': () => ({ name: 'Leak' }),
  'POST /auth/profile': () => ({ name: 'Leak' }),
  'PUT /auth/admin/users/:id': () => ({ name: 'Leak' }),
  'PUT /auth/users/:id': () => ({ name: 'Leak' }),
  'POST /auth/validation': (c) => ({ sessionId: c.callerToken }),
  'POST /auth/bridge/validate': (c) => ({ session_id: c.callerToken }),
};

/** Routes that answer with user objects; each must have been walked with a 200. */
const USER_ROUTES = [
  'POST /auth/login',
  'POST /auth/register/public',
  'POST /auth/register',
  'GET /auth/me',
  'GET /auth/user/me',
  'PUT /auth/user/me',
  'PUT /auth/profile',
  'POST /auth/profile',
  'GET /auth/validation',
  'POST /auth/validation',
  'POST /auth/refresh',
  'GET /auth/session/current',
  'POST /auth/bridge/validate',
  'POST /auth/invalidate/me',
  'GET /auth/admin/users',
  'GET /auth/admin/users/:id',
  'POST /auth/admin/users',
  'PUT /auth/admin/users/:id',
  'GET /auth/users',
  'GET /auth/users/:id',
  'POST /auth/users',
  'PUT /auth/users/:id',
];

const FORBIDDEN: [string, RegExp][] = [
  ['password hash column', /password_hash/],
  ['token hash column', /token_hash/],
  ['bcrypt hash', /\$2[aby]\$\d\d\$/],
  ['deleted_at', /"deleted_at"/],
  ['deletion_reason', /"deletion_reason"/],
  ['disabled_at', /"disabled_at"/],
  ['acquisition field', /acquisition_/],
  ['team_size_range', /team_size_range/],
];

const keyOf = (r: RouteDef<any, any, any>) => `${r.method.toUpperCase()} ${r.path}`;

async function walk(route: RouteDef<any, any, any>) {
  const [caller, target] = await Promise.all([
    makeSession(t, { user_type: 'superadmin' }),
    makeSession(t, { deletion_reason: 'hidden reason', metadata: { k: 'v' } }),
  ]);
  const [targetSession] = await t.app.repos.sessions.listByUser(target.user.id);
  const path = route.path
    .replace(':sessionId', targetSession.id)
    .replace(':id', target.user.id)
    .replace(/:[A-Za-z_]+/g, 'x');
  const body = BODIES[keyOf(route)]?.({ targetEmail: target.user.email, callerToken: caller.token });
  const sendsBody = route.method !== 'get';
  const r = await t.request(route.method.toUpperCase(), path, {
    session: caller.token,
    bridge: true,
    body: sendsBody ? (body ?? {}) : undefined,
  });
  return { r, secrets: [target.token, bystander] };
}

describe('no route leaks secrets or hidden columns', () => {
  it("when every core route is called with full rights, then no answer carries a hash, a hidden column or another session's token", async () => {
    const statuses = new Map<string, number>();
    for (const route of coreRoutes) {
      const { r, secrets } = await walk(route);
      const key = keyOf(route);
      statuses.set(key, r.status);
      expect(r.status, `${key} answered ${r.status}: ${r.text.slice(0, 200)}`).toBeLessThan(500);
      for (const [what, re] of FORBIDDEN) expect(re.test(r.text), `${key} leaks ${what}`).toBe(false);
      for (const s of secrets) expect(r.text.includes(s), `${key} leaks another session's token`).toBe(false);
    }
    for (const key of USER_ROUTES) expect(statuses.get(key), `${key} was walked with a 200`).toBe(200);
  });

  it('when users are deleted or disabled, then the admin list hides the deleted and shows no disabled_at', async () => {
    const admin = await makeSession(t, { user_type: 'admin' });
    const gone = await makeUser(t, { deleted_at: new Date(), deletion_reason: 'secret-reason-xyz' });
    const off = await makeUser(t, { disabled_at: new Date() });
    const r = await t.request('GET', '/auth/admin/users?limit=100', { session: admin.token });
    expect(r.status).toBe(200);
    expect(r.text).not.toContain(gone.email);
    expect(r.text).not.toContain('secret-reason-xyz');
    const shown = r.body.data.users.find((u: { id: string }) => u.id === off.id);
    expect(shown).toBeTruthy();
    expect(Object.keys(shown)).not.toContain('disabled_at');
  });
});
