import { notFound, type ModuleConsoleNav, type ModuleConsolePage, type ModulePageKit } from '../../../src/module-api.js';

/**
 * The console's organization pages (/admin/organizations; issue 53), for admins and superadmins: the list
 * with search by name or slug, and one organization with its member count, owners and members, each through
 * this module's admin routes run in process with the staff member's session. Templates:
 * ./admin-organizations.eta, ./admin-organization.eta; strings: ./i18n (`organizations.console.*`).
 */

const dataOf = (r: Record<string, unknown> | null): Record<string, unknown> => {
  if (!r) throw notFound('The organizations module is not installed');
  const d = r.data;
  return typeof d === 'object' && d !== null ? (d as Record<string, unknown>) : {};
};

async function list(kit: ModulePageKit): Promise<void> {
  const raw = kit.req.query.q;
  const q = typeof raw === 'string' ? raw.trim().slice(0, 200) : '';
  const rawCursor = kit.req.query.cursor;
  const cursor = typeof rawCursor === 'string' ? rawCursor.slice(0, 200) : '';
  const d = dataOf(await kit.callRoute('get', '/auth/admin/organizations', { query: { limit: '50', ...(q ? { q } : {}), ...(cursor ? { cursor } : {}) } }));
  const next = typeof d.next_cursor === 'string' ? d.next_cursor : null;
  kit.render(
    'admin-organizations',
    {
      q,
      organizations: Array.isArray(d.organizations) ? d.organizations : [],
      more: next ? `/admin/organizations?${new URLSearchParams({ ...(q ? { q } : {}), cursor: next }).toString()}` : null,
    },
    { title: kit.t('organizations.console.title') },
  );
}

async function show(kit: ModulePageKit): Promise<void> {
  const id = kit.params.id ?? '';
  const org = dataOf(await kit.callRoute('get', '/auth/admin/organizations/:id', { params: { id } })).organization as Record<string, unknown> | undefined;
  if (!org) throw notFound('No such organization');
  const members = dataOf(await kit.callRoute('get', '/auth/admin/organizations/:id/members', { params: { id } })).members;
  kit.render('admin-organization', { org, members: Array.isArray(members) ? members : [] }, { title: String(org.name ?? '') });
}

export const consolePages: ModuleConsolePage[] = [
  { method: 'get', path: '/admin/organizations', handler: list },
  { method: 'get', path: '/admin/organizations/:id', handler: show },
];

export const consoleNav: ModuleConsoleNav[] = [{ path: '/admin/organizations', label: 'organizations.console.title' }];
