import { AppError, forbidden, notFound, type ModuleContext, type UserRecord, unauthorized } from '../../src/module-api.js';
import { DEFAULT_BEHAVIORS, type Behaviors } from './types.js';

export const isAdmin = (u: UserRecord | null) => u?.user_type === 'admin' || u?.user_type === 'superadmin';
export const isWriter = (u: UserRecord | null) => u?.user_type === 'writer' || isAdmin(u);

/** The columns access decisions need. */
export interface PostAccessRow {
  id: string;
  author_id: string;
  status: string;
  visibility: string;
  password_hash: string | null;
  deleted_at: unknown;
}

export const owns = (u: UserRecord | null, p: Pick<PostAccessRow, 'author_id'>) => Boolean(u && u.id === p.author_id);
/** Writers manage their own posts, admins every post. */
export const canManage = (u: UserRecord | null, p: Pick<PostAccessRow, 'author_id'>) => isAdmin(u) || (isWriter(u) && owns(u, p));

/**
 * May the caller read this post? Drafts, scheduled, archived, deleted and private posts are
 * answered as missing to anyone but their author and admins, so their existence does not leak.
 */
export async function assertCanRead(ctx: ModuleContext, u: UserRecord | null, p: PostAccessRow, password: string | undefined): Promise<void> {
  if (isAdmin(u)) return;
  if (p.deleted_at) throw notFound('Post not found');
  if (owns(u, p)) return;
  if (p.status !== 'published' || p.visibility === 'private') throw notFound('Post not found');
  if (p.visibility === 'auth' && !u) throw unauthorized('Sign in to read this post');
  if (p.visibility === 'password') {
    if (!password) throw new AppError(403, 'POST_PASSWORD_REQUIRED', 'This post is protected by a password');
    if (!p.password_hash || !(await ctx.passwords.verify(password, p.password_hash))) {
      throw new AppError(403, 'POST_PASSWORD_INVALID', 'Wrong password for this post');
    }
  }
}

export function assertCanManage(u: UserRecord | null, p: PostAccessRow): void {
  if (!canManage(u, p)) throw forbidden(isWriter(u) ? 'Only the author or an admin may change this post' : 'Writer role required');
}

/**
 * The SQL condition for posts a caller may see in lists, search, feeds and the sitemap. Password
 * posts are listed only to their author and admins: anyone else reaches them by slug, with the password.
 */
export function visibleWhere(u: UserRecord | null, alias = 'p'): { sql: string; params: unknown[] } {
  if (isAdmin(u)) return { sql: `${alias}.deleted_at IS NULL`, params: [] };
  const open = `${alias}.status = 'published' AND ${alias}.visibility ${u ? "IN ('public', 'auth')" : "= 'public'"}`;
  if (!u) return { sql: `${alias}.deleted_at IS NULL AND ${open}`, params: [] };
  return { sql: `${alias}.deleted_at IS NULL AND ((${open}) OR ${alias}.author_id = ?)`, params: [u.id] };
}

/** What the caller may do with a post it can read. */
export function postAbilities(u: UserRecord | null, p: PostAccessRow, b: Behaviors = DEFAULT_BEHAVIORS) {
  const manage = canManage(u, p);
  const live = !p.deleted_at && p.status === 'published';
  const approved = !b.requires_approval || isAdmin(u);
  return {
    edit: manage && !p.deleted_at,
    delete: manage && !p.deleted_at,
    publish: manage && !p.deleted_at && approved,
    submit_for_review: manage && !p.deleted_at && !approved,
    restore: isAdmin(u) && Boolean(p.deleted_at),
    translate: manage && !p.deleted_at,
    comment: Boolean(u) && live && b.enables_comments,
    react: Boolean(u) && live && b.enables_reactions,
    bookmark: Boolean(u) && live && b.enables_bookmarks,
    view: live && b.enables_views,
    schedule: manage && !p.deleted_at && b.enables_scheduling,
    moderate: manage,
    view_stats: true,
  };
}
