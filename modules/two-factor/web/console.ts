import type { ModuleUserPanel } from '../../../src/module-api.js';

/**
 * The console user page's two-step verification panel (issue 61): for a user who has it on, "Reset
 * two-factor" through this module's admin route (`POST /auth/admin/users/:user_id/two-factor/reset`, run in
 * process with the staff member's session: its roles, its superadmin rule, its audit event and mail).
 * Template: ./user-two-factor.eta; strings: ./i18n (`two-factor.*`).
 */
export const userTwoFactor: ModuleUserPanel = {
  id: 'user-two-factor',
  order: 20,
  template: 'user-two-factor',
  load: (_kit, target) => Promise.resolve(target.user.two_factor ? { userId: target.user.id } : null),
  posts: [
    {
      path: '/admin/users/:id/two-factor/reset',
      async handler(kit) {
        await kit.callRoute('post', '/auth/admin/users/:user_id/two-factor/reset', { params: { user_id: kit.params.id } });
        return 'two_factor_reset';
      },
    },
  ],
};
