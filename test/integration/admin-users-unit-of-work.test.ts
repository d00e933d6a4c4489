import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSession, makeUser, userServiceFailingRevocation } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

/** The 'user.updated' and 'user.deleted' events about one user while `fn` runs, and what `fn` threw. */
async function eventsAbout(userId: string, fn: () => Promise<unknown>): Promise<{ seen: string[]; error: unknown }> {
  const seen: string[] = [];
  let error: unknown = null;
  const offs = (['user.updated', 'user.deleted'] as const).map((event) =>
    t.app.hooks.on(
      event,
      () => void seen.push(event),
      'test',
      ({ user }) => user.id === userId,
    ),
  );
  try {
    await fn();
  } catch (err) {
    error = err;
  } finally {
    for (const off of offs) off();
  }
  return { seen, error };
}

describe('an admin update or soft delete is one unit of work', () => {
  it('when revoking the sessions fails while an admin disables, demotes or deletes a user, then nothing changed and no hook ran', async () => {
    const admin = await makeUser(t, { user_type: 'admin' });
    // Only a superadmin changes a role.
    const boss = await makeUser(t, { user_type: 'superadmin' });
    const failing = userServiceFailingRevocation(t);
    const changes = {
      disable: (id: string) => failing.adminUpdate(admin, id, { disabled: true }),
      role: (id: string) => failing.adminUpdate(boss, id, { user_type: 'writer' }),
      delete: (id: string) => failing.softDelete(admin, id, 'spam'),
    };
    for (const [name, change] of Object.entries(changes)) {
      const victim = await makeSession(t);
      const before = (await t.app.repos.users.findById(victim.user.id))!;
      const { seen, error } = await eventsAbout(victim.user.id, () => change(victim.user.id));
      expect(error, name).toMatchObject({ message: 'session store down' });
      expect(seen, name).toEqual([]);
      const after = await t.app.repos.users.findById(victim.user.id, { includeDeleted: true });
      expect(after, name).toMatchObject({ user_type: before.user_type, disabled_at: null, deleted_at: null, deletion_reason: null });
      expect((await t.app.services.sessions.validate(victim.token)).user.id, name).toBe(victim.user.id);
    }
  });

  it('when the change commits, then the sessions are gone and its hook runs once, after the commit', async () => {
    const admin = await makeUser(t, { user_type: 'admin' });
    const disabled = await makeSession(t);
    const disabling = await eventsAbout(disabled.user.id, () => t.app.services.users.adminUpdate(admin, disabled.user.id, { disabled: true }));
    expect(disabling).toEqual({ seen: ['user.updated'], error: null });
    await expect(t.app.services.sessions.validate(disabled.token)).rejects.toMatchObject({ code: 'INVALID_SESSION' });
    expect(await t.app.services.sessions.listForUser(disabled.user.id)).toEqual([]);

    const deleted = await makeSession(t);
    const deleting = await eventsAbout(deleted.user.id, () => t.app.services.users.softDelete(admin, deleted.user.id, 'spam'));
    expect(deleting).toEqual({ seen: ['user.deleted'], error: null });
    await expect(t.app.services.sessions.validate(deleted.token)).rejects.toMatchObject({ code: 'INVALID_SESSION' });
    expect(await t.app.services.sessions.listForUser(deleted.user.id)).toEqual([]);
  });
});
