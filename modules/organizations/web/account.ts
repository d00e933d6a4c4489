import type { ModuleAccountSection, ModulePageKit } from '../../../src/module-api.js';

/**
 * The account page's "Organizations" section (/account#organizations; issue 53): the user's organizations
 * with their role and a "Leave" button each, and the pending invitations to the user's verified email with
 * "Accept", each through this module's own API routes run in process with the page's session (leaving keeps
 * the last-owner rule; accepting counts in organizations-accept). Template: ./organizations-account.eta;
 * strings: ./i18n (`organizations.account.*`; an outcome `x` shows `organizations.done.x`).
 */

type Org = { id: string; name: string; slug: string; role: string };
type Invitation = { id: string; role: string; organization: { name: string } };

const listOf = <T>(r: Record<string, unknown> | null, key: string): T[] => {
  const d = r?.data;
  const list = typeof d === 'object' && d !== null ? (d as Record<string, unknown>)[key] : undefined;
  return Array.isArray(list) ? (list as T[]) : [];
};

async function load(kit: ModulePageKit) {
  const mine = await kit.callRoute('get', '/auth/organizations', { query: { limit: '100' } });
  if (!mine) return null;
  const invited = await kit.callRoute('get', '/auth/organizations/invitations/mine');
  return { organizations: listOf<Org>(mine, 'organizations'), invitations: listOf<Invitation>(invited, 'invitations') };
}

export const organizationsSection: ModuleAccountSection = {
  id: 'organizations',
  // After the profile (80), before the email (90).
  order: 85,
  title: 'organizations.account.title',
  template: 'organizations-account',
  load,
  posts: [
    {
      path: '/account/organizations/leave',
      async handler(kit) {
        const user = kit.session?.user.id ?? '';
        await kit.callRoute('delete', '/auth/organizations/:id/members/:user_id', { params: { id: kit.field('organization', 64), user_id: user } });
        return 'left';
      },
    },
    {
      path: '/account/organizations/accept',
      async handler(kit) {
        await kit.callRoute('post', '/auth/organizations/invitations/:invitation_id/accept', { params: { invitation_id: kit.field('invitation', 64) } });
        return 'joined';
      },
    },
  ],
};
