import type { ModuleAccountSection } from '../../../src/module-api.js';

/**
 * The account page's "Your data" section (/account#your-data): download one's data (GET
 * /auth/user/me/privacy/export, a link the page's cookie opens) and delete the account through this
 * module's own route (its password check and `login` class), then signed out. Template: ./your-data.eta;
 * strings: ./i18n (`privacy.*`).
 */
export const yourData: ModuleAccountSection = {
  id: 'your-data',
  // Last: after core's email section (90).
  order: 100,
  title: 'privacy.title',
  template: 'your-data',
  load: () => Promise.resolve({ exportUrl: '/auth/user/me/privacy/export' }),
  posts: [
    {
      path: '/account/privacy/delete',
      async handler(kit) {
        await kit.callRoute('post', '/auth/user/me/privacy/delete', {
          body: { confirm: kit.field('confirm', 8) === 'yes', password: kit.field('password', 1024) || undefined },
        });
        kit.signOut();
        kit.res.redirect(303, '/login');
      },
    },
  ],
};
