import { z } from 'zod';
import { isAdmin } from './access.js';
import { callerOf, clientAddress, defineRoute, envelope, notFound, type ModuleContext, type Caller, type ModuleRouteDef } from './core.js';
import {
  addBookmark,
  addComment,
  commentCreate,
  commentQuery,
  commentUpdate,
  deleteComment,
  editComment,
  livePost,
  listComments,
  moderateComment,
  moderateSchema,
  postStats,
  reactionSchema,
  reactionSummary,
  recordView,
  removeBookmark,
  toggleReaction,
} from './engage.js';
import { rssFeed, sitemap } from './feeds.js';
import { removeFeaturedImage, serveImage, setFeaturedImage } from './images.js';
import { authorProfile, findBySlug, langSchema, listBookmarked, listPosts, listQuery, loadPost, readPost } from './posts-read.js';
import { changeStatus, createPost, createSchema, deletePost, restorePost, updatePost, updateSchema } from './posts-write.js';
import { createTerm, deleteTerm, listTerms, termCreate, termUpdate, updateTerm, type TermKind } from './taxonomy.js';
import { rulesOf } from './types.js';
import { deleteTranslation, listTranslations, requireWriterRole, translationSchema, upsertTranslation } from './translations.js';

const MODULE = 'blog';
const BASE = '/api/v1/posts';
const idParams = z.object({ id: z.string().trim().min(1).max(64) });
const readQuery = z.object({ lang: langSchema.optional(), password: z.string().max(200).optional() });
const pageQuery = z.object({ page: z.coerce.number().int().min(1).max(100_000).default(1), limit: z.coerce.number().int().min(1).max(100).default(20) });
const scheduleBody = z.strictObject({
  scheduled_at: z
    .string()
    .trim()
    .refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO 8601 date')
    .transform((s) => new Date(s)),
});
/** A post password travels in X-Post-Password (or ?password=). */
const postPassword = (req: { headers: Record<string, unknown> }, query?: { password?: string }) =>
  (typeof req.headers['x-post-password'] === 'string' ? (req.headers['x-post-password'] as string) : undefined) ?? query?.password;

const listAbilities = (c: Caller) => ({
  create: Boolean(c.user && ['writer', 'admin', 'superadmin'].includes(c.user.user_type)),
  moderate: isAdmin(c.user),
  restore: isAdmin(c.user),
});

/** A route any caller may use, signed in or not; `who` is resolved from the session when one is sent. */
function open<Q = Record<string, unknown>, P = Record<string, string>, B = undefined>(
  def: Omit<ModuleRouteDef<B, Q, P>, 'auth' | 'module' | 'handler'> & {
    run(a: { who: Caller; query: Q; params: P; body: B; req: any; res: any; app: ModuleContext }): Promise<unknown>;
  },
) {
  const { run, ...rest } = def;
  return defineRoute<B, Q, P, 'optional-session'>({
    ...rest,
    auth: 'optional-session',
    module: MODULE,
    handler: ({ req, res, query, params, body, ctx, auth }) => run({ who: callerOf(auth), query, params, body, req, res, app: ctx }),
  });
}

/** A route for a signed-in caller (roles are checked by the service, so the refusal names what is missing). */
function signedIn<Q = Record<string, unknown>, P = Record<string, string>, B = undefined>(
  def: Omit<ModuleRouteDef<B, Q, P>, 'auth' | 'module' | 'handler'> & {
    run(a: { who: Caller & { user: NonNullable<Caller['user']> }; query: Q; params: P; body: B; req: any; res: any; app: ModuleContext }): Promise<unknown>;
  },
) {
  const { run, ...rest } = def;
  return defineRoute<B, Q, P, 'session'>({
    ...rest,
    auth: 'session',
    module: MODULE,
    handler: ({ req, res, query, params, body, ctx, auth }) => run({ who: { user: auth.user, auth }, query, params, body, req, res, app: ctx }),
  });
}

async function postAnswer(app: ModuleContext, who: Caller, id: string, meta: Record<string, unknown> = {}) {
  const { post, can } = await readPost(app, who.user, await loadPost(app, id), {});
  return envelope(post, who, meta, can);
}

const terms = (kind: TermKind) => [
  open({ method: 'get', path: `${BASE}/${kind}`, run: async ({ who, app }) => envelope(await listTerms(app, kind), who, {}, listAbilities(who)) }),
  signedIn({
    method: 'post',
    path: `${BASE}/${kind}`,
    body: termCreate,
    run: async ({ who, app, body }) => envelope(await createTerm(app, who.user, kind, body), who),
  }),
  signedIn({
    method: 'put',
    path: `${BASE}/${kind}/:id`,
    params: idParams,
    body: termUpdate,
    run: async ({ who, app, params, body }) => envelope(await updateTerm(app, who.user, kind, params.id, body), who),
  }),
  signedIn({
    method: 'delete',
    path: `${BASE}/${kind}/:id`,
    params: idParams,
    run: async ({ who, app, params }) => envelope(await deleteTerm(app, who.user, kind, params.id), who),
  }),
];

const status = (path: string, to: 'published' | 'draft') =>
  signedIn({
    method: 'post',
    path: `${BASE}/:id/${path}`,
    params: idParams,
    run: async ({ who, app, params }) => {
      await changeStatus(app, who.user, params.id, to);
      return postAnswer(app, who, params.id);
    },
  });

export const routes = [
  open({
    method: 'get',
    path: BASE,
    query: listQuery,
    run: async ({ who, app, query }) => {
      const { posts, meta } = await listPosts(app, who.user, query);
      return envelope(posts, who, meta, listAbilities(who));
    },
  }),
  signedIn({
    method: 'post',
    path: BASE,
    body: createSchema,
    run: async ({ who, app, body }) => postAnswer(app, who, await createPost(app, who.user, body), { created: true }),
  }),
  ...terms('categories'),
  ...terms('tags'),
  signedIn({
    method: 'get',
    path: `${BASE}/bookmarks`,
    query: pageQuery,
    run: async ({ who, app, query }) => {
      const { posts, meta } = await listBookmarked(app, who.user, query.page, query.limit);
      return envelope(posts, who, meta);
    },
  }),
  open({ method: 'get', path: `${BASE}/sitemap.xml`, run: async ({ app, res }) => sitemap(app, res) }),
  open({ method: 'get', path: `${BASE}/feed.xml`, run: async ({ app, res }) => rssFeed(app, res) }),
  open({ method: 'get', path: `${BASE}/rss.xml`, run: async ({ app, res }) => rssFeed(app, res) }),
  open({
    method: 'get',
    path: `${BASE}/images/:id`,
    params: idParams,
    query: readQuery,
    run: async ({ who, app, params, res, req, query }) => serveImage(app, who.user, params.id, res, postPassword(req, query)),
  }),
  open({
    method: 'get',
    path: `${BASE}/authors/:id`,
    params: idParams,
    run: async ({ who, app, params }) => envelope(await authorProfile(app, who.user, params.id), who),
  }),
  signedIn({
    method: 'post',
    path: `${BASE}/comments/:id/moderate`,
    params: idParams,
    body: moderateSchema,
    run: async ({ who, app, params, body }) => envelope(await moderateComment(app, who.user, params.id, body), who),
  }),
  signedIn({
    method: 'put',
    path: `${BASE}/comments/:id`,
    params: idParams,
    body: commentUpdate,
    run: async ({ who, app, params, body }) => envelope(await editComment(app, who.user, params.id, body), who),
  }),
  signedIn({
    method: 'delete',
    path: `${BASE}/comments/:id`,
    params: idParams,
    run: async ({ who, app, params }) => envelope(await deleteComment(app, who.user, params.id), who),
  }),
  open({
    method: 'get',
    path: `${BASE}/id/:id`,
    params: idParams,
    query: readQuery,
    run: async ({ who, app, params, query, req }) => {
      const { post, can } = await readPost(app, who.user, await loadPost(app, params.id), { lang: query.lang, password: postPassword(req, query) });
      return envelope(post, who, {}, can);
    },
  }),
  open({
    method: 'get',
    path: `${BASE}/id/:id/translations`,
    params: idParams,
    query: readQuery,
    run: async ({ who, app, params, query, req }) => envelope(await listTranslations(app, who.user, params.id, postPassword(req, query)), who),
  }),
  signedIn({
    method: 'post',
    path: `${BASE}/id/:id/translations`,
    params: idParams,
    body: translationSchema,
    run: async ({ who, app, params, body }) => {
      requireWriterRole(who.user);
      return envelope(await upsertTranslation(app, who.user, params.id, body), who);
    },
  }),
  signedIn({
    method: 'delete',
    path: `${BASE}/id/:id/translations/:lang`,
    params: idParams.extend({ lang: langSchema }),
    run: async ({ who, app, params }) => {
      requireWriterRole(who.user);
      return envelope(await deleteTranslation(app, who.user, params.id, params.lang), who);
    },
  }),
  signedIn({
    method: 'put',
    path: `${BASE}/:id`,
    params: idParams,
    body: updateSchema,
    run: async ({ who, app, params, body }) => {
      await updatePost(app, who.user, params.id, body);
      return postAnswer(app, who, params.id);
    },
  }),
  signedIn({
    method: 'delete',
    path: `${BASE}/:id`,
    params: idParams,
    run: async ({ who, app, params }) => {
      await deletePost(app, who.user, params.id);
      return envelope({ id: params.id, deleted: true }, who);
    },
  }),
  status('publish', 'published'),
  status('unpublish', 'draft'),
  signedIn({
    method: 'post',
    path: `${BASE}/:id/schedule`,
    params: idParams,
    body: scheduleBody,
    run: async ({ who, app, params, body }) => {
      await changeStatus(app, who.user, params.id, 'scheduled', body.scheduled_at);
      return postAnswer(app, who, params.id);
    },
  }),
  signedIn({
    method: 'post',
    path: `${BASE}/:id/restore`,
    params: idParams,
    run: async ({ who, app, params }) => {
      await restorePost(app, who.user, params.id);
      return postAnswer(app, who, params.id);
    },
  }),
  signedIn({
    method: 'post',
    path: `${BASE}/:id/featured-image`,
    params: idParams,
    // Multipart: the module reads it itself, so the JSON-only body rule does not apply.
    middleware: [(_req, _res, next) => next()],
    run: async ({ who, app, params, req, res }) => envelope(await setFeaturedImage(app, who.user, params.id, req, res), who),
  }),
  signedIn({
    method: 'delete',
    path: `${BASE}/:id/featured-image`,
    params: idParams,
    run: async ({ who, app, params }) => envelope(await removeFeaturedImage(app, who.user, params.id), who),
  }),
  open({
    method: 'get',
    path: `${BASE}/:id/comments`,
    params: idParams,
    query: commentQuery.extend({ password: z.string().max(200).optional() }),
    run: async ({ who, app, params, query, req }) => {
      const post = await livePost(app, who.user, params.id, postPassword(req, query));
      const { comments, meta } = await listComments(app, who.user, post, query);
      const commentsOn = (await rulesOf(app, post.post_type)).behaviors.enables_comments;
      return envelope(comments, who, meta, { comment: Boolean(who.user) && post.status === 'published' && !post.deleted_at && commentsOn });
    },
  }),
  signedIn({
    method: 'post',
    path: `${BASE}/:id/comments`,
    params: idParams,
    body: commentCreate,
    run: async ({ who, app, params, body, req }) => {
      const post = await livePost(app, who.user, params.id, postPassword(req) ?? body.post_password);
      return envelope(await addComment(app, who.user, post, body), who);
    },
  }),
  open({
    method: 'get',
    path: `${BASE}/:id/reactions`,
    params: idParams,
    query: readQuery,
    run: async ({ who, app, params, query, req }) => {
      const post = await livePost(app, who.user, params.id, postPassword(req, query));
      return envelope(await reactionSummary(app, who.user, post.id), who);
    },
  }),
  signedIn({
    method: 'post',
    path: `${BASE}/:id/reactions`,
    params: idParams,
    body: reactionSchema,
    run: async ({ who, app, params, body, req }) => {
      const post = await livePost(app, who.user, params.id, postPassword(req));
      return envelope(await toggleReaction(app, who.user, post, body.reaction_type), who);
    },
  }),
  signedIn({
    method: 'post',
    path: `${BASE}/:id/bookmark`,
    params: idParams,
    run: async ({ who, app, params, req }) => envelope(await addBookmark(app, who.user, await livePost(app, who.user, params.id, postPassword(req))), who),
  }),
  signedIn({
    method: 'delete',
    path: `${BASE}/:id/bookmark`,
    params: idParams,
    run: async ({ who, app, params }) => envelope(await removeBookmark(app, who.user, params.id), who),
  }),
  open({
    method: 'post',
    path: `${BASE}/:id/view`,
    params: idParams,
    run: async ({ who, app, params, req }) => {
      const post = await livePost(app, who.user, params.id, postPassword(req));
      return envelope(await recordView(app, who.user, post, `${clientAddress(req)}|${String(req.headers['user-agent'] ?? '')}`), who);
    },
  }),
  open({
    method: 'get',
    path: `${BASE}/:id/stats`,
    params: idParams,
    query: readQuery,
    run: async ({ who, app, params, query, req }) =>
      envelope(await postStats(app, who.user, await livePost(app, who.user, params.id, postPassword(req, query))), who),
  }),
  open({
    method: 'get',
    path: `${BASE}/:slug`,
    params: z.object({ slug: z.string().trim().min(1).max(200) }),
    query: readQuery,
    run: async ({ who, app, params, query, req }) => {
      const found = await findBySlug(app, params.slug.toLowerCase(), query.lang);
      if (!found) throw notFound('Post not found');
      const { post, can } = await readPost(app, who.user, found.row, { lang: query.lang, password: postPassword(req, query) });
      return envelope(post, who, found.redirectTo ? { redirect_to: found.redirectTo, canonical_slug: found.redirectTo } : {}, can);
    },
  }),
];
