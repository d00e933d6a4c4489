/**
 * Roles and permissions (issue 53). A permission is `resource:action`; `*` in the action matches any
 * run of characters (`members:*`). The built-in `org:*` permissions govern the organization itself.
 * Owners hold every permission, admins every one but `org:delete`, members none.
 */
export const PERMISSION_RE = /^[a-z][a-z0-9_-]*:[a-z*][a-z0-9_*-]*$/;
export const ROLE_NAME_RE = /^[a-z][a-z0-9_-]{0,63}$/;

export const ORG_PERMISSIONS = [
  'org:update',
  'org:delete',
  'members:invite',
  'members:remove',
  'members:update_role',
  'roles:manage',
  'domains:manage',
] as const;
export type OrgPermission = (typeof ORG_PERMISSIONS)[number];

export const BUILT_IN_ROLES = ['owner', 'admin', 'member'] as const;
export type BuiltInRole = (typeof BUILT_IN_ROLES)[number];
export const isBuiltIn = (role: string): role is BuiltInRole => (BUILT_IN_ROLES as readonly string[]).includes(role);

/** What a role grants: everything but `except`, or only what `list` matches. */
export interface Grant {
  all: boolean;
  except: string[];
  list: string[];
}

export const BUILT_IN_GRANTS: Record<BuiltInRole, Grant> = {
  owner: { all: true, except: [], list: [] },
  admin: { all: true, except: ['org:delete'], list: [] },
  member: { all: false, except: [], list: [] },
};
/** Everything: a superadmin acting on any organization. */
export const ALL: Grant = BUILT_IN_GRANTS.owner;

export const customGrant = (permissions: string[]): Grant => ({ all: false, except: [], list: permissions });

const globs = new Map<string, RegExp>();
/** Whether the pattern (a permission, `*` in its action matching anything) matches `permission`. */
function matches(pattern: string, permission: string): boolean {
  if (!pattern.includes('*')) return pattern === permission;
  let re = globs.get(pattern);
  if (!re) {
    re = new RegExp(`^${pattern.replace(/[-_:]/g, (c) => `\\${c}`).replace(/\*/g, '.*')}$`);
    if (globs.size > 1000) globs.clear();
    globs.set(pattern, re);
  }
  return re.test(permission);
}

/** Whether the grant allows `permission` (a permission, or a pattern read literally). */
export function allows(grant: Grant, permission: string): boolean {
  if (grant.all) return !grant.except.some((e) => matches(permission, e) || matches(e, permission));
  return grant.list.some((p) => matches(p, permission));
}

/** Whether everything `wanted` grants is granted by `held` too (no one gives more than they have). */
export function covers(held: Grant, wanted: Grant): boolean {
  if (wanted.all) return held.all && held.except.every((e) => wanted.except.includes(e));
  return wanted.list.every((p) => allows(held, p));
}

/** The permissions a role lists in answers: the built-in ones it holds, or its own list. */
export function listed(grant: Grant): string[] {
  return grant.all ? ORG_PERMISSIONS.filter((p) => allows(grant, p)) : [...grant.list];
}
