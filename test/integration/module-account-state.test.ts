import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry as shippedModules } from '../../modules/index.js';
import type { ModuleContext } from '../../src/module-api.js';
import { makeUser } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { testModule } from './module-helpers.js';

/**
 * Account-state columns (disabled_at, is_verified, two_factor) are written only by their own flows:
 * a module's users.patch refuses them, and the second factor is switched through users.setTwoFactor
 * by a module that provides it (its manifest answers 'auth.two_factor.methods').
 */
const PLAIN = 'test-state-plain';
const PROVIDER = 'test-state-2fa';
let t: TestApp;
let plain: ModuleContext;
let provider: ModuleContext;

beforeAll(async () => {
  t = await startTestApp();
  const mods = [testModule(PLAIN), testModule(PROVIDER, { hooks: [{ event: 'auth.two_factor.methods', handler: () => undefined }] })];
  await t.app.modules.setRegistry([...shippedModules, ...mods]);
  await t.app.modules.hub.install([PLAIN, PROVIDER]);
  plain = t.app.modules.context(PLAIN);
  provider = t.app.modules.context(PROVIDER);
});
afterAll(async () => {
  await t?.close();
});

describe('account-state columns through the module API', () => {
  it.each([
    ['disabled_at', { disabled_at: new Date() }],
    ['is_verified', { is_verified: true }],
    ['two_factor', { two_factor: true }],
  ])('when a module patches %s, then it is refused and the row is unchanged', async (column, values) => {
    const user = await makeUser(t, { is_verified: false });
    for (const ctx of [plain, provider]) {
      expect(() => ctx.users.patch(user.id, values), ctx.id).toThrow(new RegExp(`may not write ${column}`));
    }
    const after = await t.app.repos.users.findById(user.id);
    expect(after).toMatchObject({ disabled_at: null, is_verified: false, two_factor: false });
  });

  it('when a module that does not provide the second factor sets two_factor, then it is refused', async () => {
    const user = await makeUser(t);
    expect(() => plain.users.setTwoFactor(user.id, true)).toThrow(/does not provide the second factor/);
    expect((await t.app.repos.users.findById(user.id))?.two_factor).toBe(false);
  });

  it('when the second-factor provider sets two_factor, then it is written with the unit of work and announced after the commit', async () => {
    const user = await makeUser(t);
    const seen: boolean[] = [];
    const off = t.app.hooks.on(
      'user.updated',
      ({ user: u }) => void seen.push(u.two_factor),
      'test',
      ({ user: u }) => u.id === user.id,
    );
    try {
      await expect(
        provider.db.transaction(async (tx) => {
          await provider.users.setTwoFactor(user.id, true, { tx });
          throw new Error('later step failed');
        }),
      ).rejects.toThrow('later step failed');
      expect((await provider.users.find(user.id))?.two_factor).toBe(false);
      expect(seen).toEqual([]);
      const on = await provider.db.transaction((tx) => provider.users.setTwoFactor(user.id, true, { tx }));
      expect(on.two_factor).toBe(true);
      expect(seen).toEqual([true]);
      expect((await provider.users.setTwoFactor(user.id, false)).two_factor).toBe(false);
    } finally {
      off();
    }
  });
});

describe('no full session through the module API without the second factor', () => {
  const notActive = async (attempt: Promise<{ status: string }>) => {
    const outcome = await attempt.then(
      (r) => r.status,
      (err: { status?: number }) => `refused ${err.status}`,
    );
    expect(outcome).not.toBe('active');
  };

  it('when a module signs in a two-factor user with a record that says two_factor false, then the stored user decides: no full session', async () => {
    const user = await makeUser(t);
    const on = await provider.users.setTwoFactor(user.id, true);
    for (const ctx of [plain, provider]) await notActive(ctx.signIn({ ...on, two_factor: false }, 'test'));
  });

  it('when a module that does not provide the second factor activates a pending session, then it is refused', async () => {
    const user = await makeUser(t);
    const { session } = await t.app.services.sessions.create(user.id, { status: 'pending_2fa' });
    await expect(plain.sessions.activate(session.id, { user, method: 'test' })).rejects.toThrow(/does not provide the second factor/);
    expect((await t.app.repos.sessions.findById(session.id))?.status).toBe('pending_2fa');
  });

  it("when the provider activates another user's pending session, or a session that is not pending, then nothing changes", async () => {
    const owner = await makeUser(t);
    const other = await makeUser(t);
    const { session } = await t.app.services.sessions.create(owner.id, { status: 'pending_2fa' });
    expect(await provider.sessions.activate(session.id, { user: other, method: 'test' })).toBeNull();
    expect((await t.app.repos.sessions.findById(session.id))?.status).toBe('pending_2fa');
    expect((await provider.sessions.activate(session.id, { user: owner, method: 'test' }))?.status).toBe('active');
    const full = await t.app.services.sessions.create(other.id);
    expect(await provider.sessions.activate(full.session.id, { user: other, method: 'test' })).toBeNull();
  });
});
