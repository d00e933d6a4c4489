import { z } from 'zod';
import { AppError, badRequest, forbidden, type ModuleContext, type Transaction } from '../../src/module-api.js';
import type { BodyFormat } from './render.js';

/**
 * Post types as the blog sees them. A module that defines post types (post-types) answers the
 * blog's event `blog.post_types` with every type it knows; without one, the blog has its built-in
 * type `post`, whose behaviours are what the blog always did. The blog enforces the behaviours;
 * what the fields of a type hold is checked by the provider (`checkFields`).
 */
export type Visibility = 'public' | 'auth' | 'private' | 'password';

export type Behaviors = {
  public_by_default: boolean;
  /** The visibility of a new post that names none (null: public_by_default decides). */
  default_visibility: Visibility | null;
  enables_seo: boolean;
  enables_comments: boolean;
  enables_reactions: boolean;
  enables_bookmarks: boolean;
  enables_views: boolean;
  enables_scheduling: boolean;
  /** Writers' posts wait in status `pending` until an admin publishes them. */
  requires_approval: boolean;
  allows_password_visibility: boolean;
  allowed_body_formats: BodyFormat[];
  /** Live (not deleted) posts of the type one author may have; null: no limit. */
  max_per_author: number | null;
};

export type PostTypeRules = {
  type_key: string;
  slug_prefix: string;
  is_active: boolean;
  behaviors: Behaviors;
  /** Checks a post's field values against the type's field schema; answers them normalised or throws a 400 naming the field. */
  checkFields(values: Record<string, unknown>): Record<string, unknown>;
};

/** Payload of `blog.post_types`: a provider sets `types`. */
export type PostTypesQuery = { types: PostTypeRules[] | null };
/** Payload of `blog.post_types.usage` (raised by a provider): the blog fills in the live posts per type. */
export type PostTypeUsage = { counts: Record<string, number> };
/** Payload of `blog.post_types.move` (raised by a provider inside its transaction): the blog moves the posts. */
export type PostTypeMove = { from: string; to: string; tx: unknown; moved: number };

export const DEFAULT_BEHAVIORS: Behaviors = Object.freeze({
  public_by_default: true,
  default_visibility: null,
  enables_seo: true,
  enables_comments: true,
  enables_reactions: true,
  enables_bookmarks: true,
  enables_views: true,
  enables_scheduling: true,
  requires_approval: false,
  allows_password_visibility: true,
  allowed_body_formats: ['markdown', 'html', 'plain'],
  max_per_author: null,
}) as Behaviors;

export const DEFAULT_TYPE = 'post';

const noFields = (key: string) => (values: Record<string, unknown>) => {
  const [first] = Object.keys(values);
  if (first)
    throw badRequest(`fields.${first}: posts of type "${key}" have no field ${first}`, [{ field: `fields.${first}`, message: 'not a field of this type' }]);
  return {};
};

/** The built-in type, and what a post of a type nobody defines (any longer) follows. */
const fallback = (key: string): PostTypeRules => ({
  type_key: key,
  slug_prefix: '',
  is_active: key === DEFAULT_TYPE,
  behaviors: DEFAULT_BEHAVIORS,
  checkFields: noFields(key),
});

/** Every type a provider defines (inactive ones included), with `post` always there. */
export async function postTypes(ctx: ModuleContext): Promise<Map<string, PostTypeRules>> {
  const q: PostTypesQuery = { types: null };
  await ctx.hooks.run('blog.post_types', q);
  const map = new Map((q.types ?? []).map((t) => [t.type_key, t]));
  if (!map.has(DEFAULT_TYPE)) map.set(DEFAULT_TYPE, fallback(DEFAULT_TYPE));
  return map;
}

/** The rules a post of type `key` follows among `types` (the blog's defaults when no one defines it). */
export const ruleIn = (types: Map<string, PostTypeRules>, key: string | null | undefined): PostTypeRules =>
  types.get(key || DEFAULT_TYPE) ?? fallback(key || DEFAULT_TYPE);

/** The rules an existing post follows (its type, or the blog's defaults when no one defines it). */
export const rulesOf = async (ctx: ModuleContext, key: string | null | undefined): Promise<PostTypeRules> => ruleIn(await postTypes(ctx), key);

/** A post type key as posts and lists name it. */
export const postTypeKey = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z][a-z0-9-]{0,63}$/, 'must be a post type key');

/** The rules for writing a post as type `key`: it must be defined and active. */
export async function rulesForWrite(ctx: ModuleContext, key: string): Promise<PostTypeRules> {
  const t = (await postTypes(ctx)).get(key);
  if (!t) throw new AppError(400, 'UNKNOWN_POST_TYPE', `post_type: no post type "${key}"`, [{ field: 'post_type', message: 'no such post type' }]);
  if (!t.is_active) throw new AppError(400, 'POST_TYPE_INACTIVE', `post_type: post type "${key}" is not active`, [{ field: 'post_type', message: 'inactive' }]);
  return t;
}

/** The public path of a post: `/<slug_prefix>/<slug>` (no prefix: `/<slug>`). */
export const publicPath = (t: Pick<PostTypeRules, 'slug_prefix'> | undefined, slug: string) =>
  `/${t?.slug_prefix ? `${t.slug_prefix.replace(/^\/+|\/+$/g, '')}/` : ''}${slug}`;

export type Engagement = 'comments' | 'reactions' | 'bookmarks' | 'views';

/** Refuses an engagement the post's type switches off: 403 with COMMENTS_DISABLED, REACTIONS_DISABLED, … */
export async function assertEngagement(ctx: ModuleContext, post: { post_type?: string | null }, what: Engagement): Promise<void> {
  const t = await rulesOf(ctx, post.post_type);
  if (!t.behaviors[`enables_${what}`]) {
    throw forbidden(`Posts of type "${t.type_key}" do not take ${what}`, `${what.toUpperCase()}_DISABLED`);
  }
}

/** `blog.post_types.defaults`: the behaviours a type has unless it sets others (the blog owns them). */
export function defaultBehaviors(payload: { behaviors: Record<string, unknown> | null }): void {
  payload.behaviors = { ...DEFAULT_BEHAVIORS, allowed_body_formats: [...DEFAULT_BEHAVIORS.allowed_body_formats] };
}

/** `blog.post_types.usage`: how many posts (deleted ones included) each type has. */
export async function countByType(payload: PostTypeUsage, ctx: ModuleContext): Promise<void> {
  const rows = await ctx.db.select<{ post_type: string; n: number | string }>('SELECT post_type, COUNT(*) AS n FROM blog_posts GROUP BY post_type');
  for (const r of rows) payload.counts[r.post_type] = Number(r.n);
}

/** `blog.post_types.move`: every post of one type becomes a post of another, inside the provider's transaction. */
export async function moveType(payload: PostTypeMove, ctx: ModuleContext): Promise<void> {
  const moved = await ctx.db.select(
    'UPDATE blog_posts SET post_type = ?, updated_at = ? WHERE post_type = ? RETURNING id',
    [payload.to, new Date(), payload.from],
    {
      tx: payload.tx as Transaction,
    },
  );
  payload.moved = moved.length;
}
