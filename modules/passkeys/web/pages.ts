import type { ModuleAccountSection, ModuleUserPanel } from '../../../src/module-api.js';

/**
 * The passkeys' pages (issue 61): the account page's section (/account#passkey-list: rename, remove, and
 * adding through web.js with @simplewebauthn/browser, which calls /auth/passkeys/register/*) and the console
 * user page's panel (a user's passkeys, each removable where the staff member manages the user), each
 * through this module's own API routes run in process with the page's session. Templates: ./passkey-list.eta,
 * ./user-passkeys.eta; strings: ./i18n (`passkeys.*`; an outcome `x` shows `passkeys.done.x`, on the console
 * `passkeys.console.done.x`).
 */

type Listed = { passkeys?: { id: string; name: string; created_at?: string; last_used_at?: string }[] };

export const passkeyList: ModuleAccountSection = {
  id: 'passkey-list',
  // After two-step verification (20), before the sessions (40).
  order: 30,
  title: 'passkeys.title',
  template: 'passkey-list',
  async load(kit) {
    const r = (await kit.callRoute('get', '/auth/passkeys')) as Listed | null;
    return r ? { passkeys: r.passkeys ?? [], canAdd: true } : null;
  },
  posts: [
    {
      path: '/account/passkeys/rename',
      async handler(kit) {
        await kit.callRoute('patch', '/auth/passkeys/:id', { params: { id: kit.field('id', 64) }, body: { name: kit.field('name', 200) } });
        return 'passkey_renamed';
      },
    },
    {
      path: '/account/passkeys/remove',
      async handler(kit) {
        await kit.callRoute('delete', '/auth/passkeys/:id', { params: { id: kit.field('id', 64) } });
        return 'passkey_removed';
      },
    },
  ],
};

export const userPasskeys: ModuleUserPanel = {
  id: 'user-passkeys',
  order: 30,
  template: 'user-passkeys',
  async load(kit, target) {
    const r = (await kit.callRoute('get', '/auth/admin/users/:user_id/passkeys', { params: { user_id: target.user.id } })) as Listed | null;
    return r ? { passkeys: r.passkeys ?? [], manage: target.manage, userId: target.user.id } : null;
  },
  posts: [
    {
      // The module's admin removal (audited with the admin as actor, the user mailed), as DELETE on the API.
      path: '/admin/users/:id/passkeys/:passkeyId/remove',
      async handler(kit) {
        await kit.callRoute('delete', '/auth/admin/users/:user_id/passkeys/:id', { params: { user_id: kit.params.id, id: kit.params.passkeyId } });
        return 'passkey_removed';
      },
    },
  ],
};
