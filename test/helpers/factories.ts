import { createUserService } from '../../src/services/user-service.js';
import { randomBytes, randomUUID } from 'node:crypto';
import type { UserRecord } from '../../src/data/repositories/user-repository.js';
import type { TestApp } from './test-app.js';

export const DEFAULT_PASSWORD = 'Correct-Horse-42';

let seq = 0;
/** A unique address per call, so tests never collide on the shared database. */
export const uniqueEmail = (tag = 'user') => `${tag}.${Date.now().toString(36)}.${++seq}.${randomBytes(3).toString('hex')}@example.test`;

/** Inserts a user directly (test data only; production paths go through the user service). */
export async function makeUser(t: TestApp, values: Partial<UserRecord> & { password?: string } = {}): Promise<UserRecord> {
  const { password = DEFAULT_PASSWORD, ...rest } = values;
  return t.app.repos.users.create({
    id: randomUUID(),
    email: uniqueEmail(),
    name: 'Test',
    last_name: 'User',
    user_type: 'customer',
    is_verified: true,
    password_hash: await t.app.services.passwords.hash(password),
    ...rest,
  });
}

/** A user with a live session token. */
export async function makeSession(t: TestApp, values: Partial<UserRecord> & { password?: string } = {}): Promise<{ user: UserRecord; token: string }> {
  const user = await makeUser(t, values);
  const { token } = await t.app.services.sessions.create(user.id, { ip: '127.0.0.1', userAgent: 'vitest' });
  return { user, token };
}

/** The app's user service, but revoking sessions fails (a session store down half-way through a change). */
export function userServiceFailingRevocation(t: TestApp) {
  return createUserService({
    users: t.app.repos.users,
    sessions: {
      ...t.app.services.sessions,
      revokeAllForUser: async () => {
        throw new Error('session store down');
      },
    },
    passwords: t.app.services.passwords,
    hooks: t.app.hooks,
    modules: { isInstalled: () => false, registry: () => [] },
    transaction: (fn) => t.app.sequelize.transaction(fn),
    audit: t.app.services.audit,
  });
}
