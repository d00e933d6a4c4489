import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/audit/audit-types.js';
import type { UserRecord } from '../../src/data/repositories/user-repository.js';
import { BACKEND } from '../helpers/backend.js';
import { DEFAULT_PASSWORD, makeSession, uniqueEmail } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Issue 59 (ASVS 8.2.3): only a superadmin changes a user's role (user_type) or creates a user of a
 * role other than customer or writer. A plain admin's attempt is a 403 `{success:false, error, code:
 * 'FORBIDDEN'}` that writes nothing: not the role, not the other fields of the same request, no
 * audit event, no sign-out. Every (actor, target's role, new role) triple goes through the HTTP API.
 */

const ROLES = ['customer', 'writer', 'admin', 'superadmin'] as const;
type Role = (typeof ROLES)[number];
const ACTORS = ['admin', 'superadmin'] as const;
type Actor = (typeof ACTORS)[number];

const ROLE_CHANGE_REFUSED = "Only a superadmin can change a user's role";
const SUPERADMIN_UNTOUCHABLE = 'Only a superadmin can manage a superadmin';
const createRefused = (role: Role) => `Only a superadmin can create a user of role ${role}`;
const an = (role: string) => (/^[aeiou]/.test(role) ? `an ${role}` : `a ${role}`);

let t: TestApp;
const actors = {} as Record<Actor, { user: UserRecord; token: string }>;
beforeAll(async () => {
  t = await startTestApp();
  for (const a of ACTORS) actors[a] = await makeSession(t, { user_type: a });
});
afterAll(async () => t?.close());

const row = async (id: string) => (await t.app.repos.users.findById(id))!;
const eventsAbout = async (userId: string): Promise<AuditEvent[]> => (await t.app.services.audit.list({ userId, limit: 100 })).events;
const alive = async (token: string) => (await t.request('GET', '/auth/validation', { session: token })).status === 200;

/** What PUT answers: a superadmin may do anything to someone else; an admin never touches a superadmin nor changes a role. */
function expectedUpdate(actor: Actor, from: Role, to: Role): { status: 200 } | { status: 403; error: string } {
  if (actor === 'superadmin') return { status: 200 };
  if (from === 'superadmin') return { status: 403, error: SUPERADMIN_UNTOUCHABLE };
  return from === to ? { status: 200 } : { status: 403, error: ROLE_CHANGE_REFUSED };
}

describe(`PUT /auth/admin/users/:id: who may change a role (${BACKEND})`, () => {
  for (const actor of ACTORS) {
    for (const from of ROLES) {
      for (const to of ROLES) {
        const want = expectedUpdate(actor, from, to);
        const verdict = want.status === 200 ? 'it is written' : `403 and nothing is written`;
        it(`when ${an(actor)} sets user_type ${to} on ${an(from)} together with other fields, then ${verdict}`, async () => {
          const target = await makeSession(t, { user_type: from, name: 'Before', title: null });
          const before = await row(target.user.id);
          const r = await t.request('PUT', `/auth/admin/users/${target.user.id}`, {
            session: actors[actor].token,
            body: { user_type: to, name: 'After', title: 'Dr' },
          });
          expect(r.status).toBe(want.status);
          const after = await row(target.user.id);
          const events = await eventsAbout(target.user.id);

          if (want.status === 403) {
            expect(r.body).toEqual({ success: false, error: want.error, code: 'FORBIDDEN' });
            // The whole request is refused: the role, the other fields and the row's timestamp are as they were.
            expect(after).toMatchObject({ user_type: from, name: 'Before', title: null });
            expect(new Date(after.updated_at).getTime()).toBe(new Date(before.updated_at).getTime());
            expect(events).toEqual([]);
            expect(await alive(target.token)).toBe(true);
            return;
          }

          expect(r.body).toMatchObject({ success: true, data: { user: { id: target.user.id, user_type: to, name: 'After', title: 'Dr' } } });
          expect(after).toMatchObject({ user_type: to, name: 'After', title: 'Dr' });
          const roleEvents = events.filter((e) => e.type === 'user.role_changed');
          if (from === to) {
            expect(roleEvents).toEqual([]);
            expect(await alive(target.token)).toBe(true);
          } else {
            expect(roleEvents).toHaveLength(1);
            expect(roleEvents[0]).toMatchObject({ actor: { id: actors[actor].user.id, user_type: actor }, details: { from, to } });
            // A role change signs the user out everywhere, as before.
            expect(await alive(target.token)).toBe(false);
          }
        });
      }
    }
  }

  it('when an admin edits the other fields of a customer, a writer or an admin (the same user_type sent or none), then they change', async () => {
    for (const role of ['customer', 'writer', 'admin'] as const) {
      for (const body of [
        { name: 'Edited', last_name: 'Person', title: 'Prof', phone: '+34 600 111 222', is_verified: false },
        { userType: role, name: 'Again', lang: 'es' },
      ]) {
        const target = await makeSession(t, { user_type: role });
        const r = await t.request('PUT', `/auth/admin/users/${target.user.id}`, { session: actors.admin.token, body });
        expect(r.status, `${role} ${JSON.stringify(body)}`).toBe(200);
        const { userType: _same, ...fields } = body as Record<string, unknown>;
        expect(await row(target.user.id)).toMatchObject({ ...fields, user_type: role });
        expect(await alive(target.token)).toBe(true);
      }
    }
  });

  it('when an admin changes a role through the /auth/users alias or with the camelCase userType, then the same 403 and nothing is written', async () => {
    for (const [path, from, body] of [
      ['/auth/users', 'customer', { user_type: 'admin', name: 'After' }],
      ['/auth/admin/users', 'customer', { userType: 'writer', name: 'After' }],
      ['/auth/users', 'writer', { userType: 'customer', name: 'After', disabled: true }],
    ] as const) {
      const target = await makeSession(t, { user_type: from, name: 'Before' });
      const r = await t.request('PUT', `${path}/${target.user.id}`, { session: actors.admin.token, body });
      expect(r.status, `${path} ${JSON.stringify(body)}`).toBe(403);
      expect(r.body).toEqual({ success: false, error: ROLE_CHANGE_REFUSED, code: 'FORBIDDEN' });
      expect(await row(target.user.id)).toMatchObject({ user_type: from, name: 'Before', disabled_at: null });
      expect(await eventsAbout(target.user.id)).toEqual([]);
    }
  });
});

/** What the admin create routes answer: an admin creates customers and writers only. */
const mayCreate = (actor: Actor, role: Role) => actor === 'superadmin' || role === 'customer' || role === 'writer';

describe(`POST /auth/admin/users: who may create which role (${BACKEND})`, () => {
  for (const actor of ACTORS) {
    for (const role of ROLES) {
      const allowed = mayCreate(actor, role);
      it(`when ${an(actor)} creates ${an(role)}, then ${allowed ? 'it is created' : '403 and no user is created'}`, async () => {
        const email = uniqueEmail(`new-${role}`);
        const r = await t.request('POST', '/auth/admin/users', {
          session: actors[actor].token,
          body: { email, password: DEFAULT_PASSWORD, name: 'New', user_type: role },
        });
        const created = await t.app.repos.users.findByEmail(email, { includeDeleted: true });
        if (!allowed) {
          expect(r.status).toBe(403);
          expect(r.body).toEqual({ success: false, error: createRefused(role), code: 'FORBIDDEN' });
          expect(created).toBeNull();
          return;
        }
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ success: true, data: { user: { email, user_type: role } } });
        expect(created).toMatchObject({ user_type: role });
        const events = await eventsAbout(created!.id);
        expect(events.map((e) => e.type)).toEqual(['user.created']);
        expect(events[0]).toMatchObject({ actor: { id: actors[actor].user.id }, details: { via: 'admin', user_type: role } });
      });
    }
  }

  it('when an admin creates a user without a role, then it is a customer', async () => {
    const email = uniqueEmail('default-role');
    const r = await t.request('POST', '/auth/admin/users', { session: actors.admin.token, body: { email, password: DEFAULT_PASSWORD } });
    expect(r.status).toBe(200);
    expect((await t.app.repos.users.findByEmail(email))!.user_type).toBe('customer');
  });

  it('when an admin creates an admin or a superadmin through POST /auth/users or POST /auth/register with a session, then the same 403 and no user', async () => {
    for (const [path, role] of [
      ['/auth/users', 'admin'],
      ['/auth/users', 'superadmin'],
      ['/auth/register', 'admin'],
      ['/auth/register', 'superadmin'],
    ] as const) {
      const email = uniqueEmail(`alias-${role}`);
      const r = await t.request('POST', path, { session: actors.admin.token, body: { email, password: DEFAULT_PASSWORD, userType: role } });
      expect(r.status, `${path} ${role}`).toBe(403);
      expect(r.body).toEqual({ success: false, error: createRefused(role), code: 'FORBIDDEN' });
      expect(await t.app.repos.users.findByEmail(email, { includeDeleted: true })).toBeNull();
    }
  });
});

describe('GET /openapi.json: the rule is documented on user_type', () => {
  it('when fetched, then the admin update and create bodies say that only a superadmin changes or grants a role', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, any>> };
    const userType = (path: string, method: string) =>
      doc.paths[path][method].requestBody.content['application/json'].schema.properties.user_type as { description?: string };
    for (const path of ['/auth/admin/users/{id}', '/auth/users/{id}']) {
      expect(userType(path, 'put').description, path).toMatch(/Only a superadmin may change it/);
    }
    for (const path of ['/auth/admin/users', '/auth/users']) {
      expect(userType(path, 'post').description, path).toMatch(/Only a superadmin may create an admin or a superadmin/);
    }
  });
});
