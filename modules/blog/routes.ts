import { z } from 'zod';
import { isAdmin } from './access.js';
import { clientAddress, envelope, open, signedIn, type Caller } from './caller.js';
import { notFound, type ModuleContext } from '../../src/module-api.js';
import {
  addBookmark,
  addComment,
  commentCreate,
  commentQuery,
  commentQueue,
  commentUpdate,
  deleteComment,
  editComment,
  livePost,
  listComments,
  moderateComment,
  moderateSchema,
  postStats,
  queueQuery,
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
  (typeof req.headers['x-post-password'] === 'string' ? req.headers['x-post-password'] : undefined) ?? query?.password;

const listAbilities = (c: Caller) => ({
  create: Boolean(c.user && ['writer', 'admin', 'superadmin'].includes(c.user.user_type)),
  moderate: isAdmin(c.user),
  restore: isAdmin(c.user),
});

async function postAnswer(ctx: ModuleContext, who: Caller, id: string, meta: Record<string, unknown> = {}) {
  const { post, can } = await readPost(ctx, who.user, await loadPost(ctx, id), {});
  return envelope(post, who, meta, can);
}

/** The term kind in summaries: plural, singular. */
const TERM_NAMES: Record<TermKind, [string, string]> = { categories: ['categories', 'category'], tags: ['tags', 'tag'] };

const terms = (kind: TermKind) => [
  open({
    method: 'get',
    path: `${BASE}/${kind}`,
    summary: `List post ${TERM_NAMES[kind][0]}`,
    run: async ({ who, ctx }) => envelope(await listTerms(ctx, kind), who, {}, listAbilities(who)),
  }),
  signedIn({
    method: 'post',
    path: `${BASE}/${kind}`,
    summary: `Create a post ${TERM_NAMES[kind][1]}`,
    body: termCreate,
    run: async ({ who, ctx, body }) => envelope(await createTerm(ctx, who.user, kind, body), who),
  }),
  signedIn({
    method: 'put',
    path: `${BASE}/${kind}/:id`,
    summary: `Update a post ${TERM_NAMES[kind][1]}`,
    params: idParams,
    body: termUpdate,
    run: async ({ who, ctx, params, body }) => envelope(await updateTerm(ctx, who.user, kind, params.id, body), who),
  }),
  signedIn({
    method: 'delete',
    path: `${BASE}/${kind}/:id`,
    summary: `Delete a post ${TERM_NAMES[kind][1]}`,
    params: idParams,
    run: async ({ who, ctx, params }) => envelope(await deleteTerm(ctx, who.user, kind, params.id), who),
  }),
];

const status = (path: string, to: 'published' | 'draft', summary: string) =>
  signedIn({
    method: 'post',
    path: `${BASE}/:id/${path}`,
    summary,
    params: idParams,
    run: async ({ who, ctx, params }) => {
      await changeStatus(ctx, who.user, params.id, to);
      return postAnswer(ctx, who, params.id);
    },
  });

export const routes = [
  open({
    method: 'get',
    path: BASE,
    summary: 'List and search posts',
    query: listQuery,
    run: async ({ who, ctx, query }) => {
      const { posts, meta } = await listPosts(ctx, who.user, query);
      return envelope(posts, who, meta, listAbilities(who));
    },
  }),
  signedIn({
    method: 'post',
    path: BASE,
    summary: 'Create a post',
    body: createSchema,
    run: async ({ who, ctx, body }) => postAnswer(ctx, who, await createPost(ctx, who.user, body), { created: true }),
  }),
  ...terms('categories'),
  ...terms('tags'),
  signedIn({
    method: 'get',
    path: `${BASE}/bookmarks`,
    summary: 'List the posts you bookmarked',
    query: pageQuery,
    run: async ({ who, ctx, query }) => {
      const { posts, meta } = await listBookmarked(ctx, who.user, query.page, query.limit);
      return envelope(posts, who, meta);
    },
  }),
  // The moderation queue across posts (admins); before `${BASE}/:slug`, which would take the path.
  signedIn({
    method: 'get',
    path: `${BASE}/comments`,
    summary: 'Comment moderation queue across posts (admin)',
    query: queueQuery,
    run: async ({ who, ctx, query }) => {
      const { comments, meta } = await commentQueue(ctx, who.user, query);
      return envelope(comments, who, meta);
    },
  }),
  open({ method: 'get', path: `${BASE}/sitemap.xml`, summary: 'Sitemap of the published posts (XML)', run: async ({ ctx, res }) => sitemap(ctx, res) }),
  open({ method: 'get', path: `${BASE}/feed.xml`, summary: 'Feed of the latest posts (RSS)', run: async ({ ctx, res }) => rssFeed(ctx, res) }),
  open({
    method: 'get',
    path: `${BASE}/rss.xml`,
    summary: 'Feed of the latest posts (RSS, alias of feed.xml)',
    run: async ({ ctx, res }) => rssFeed(ctx, res),
  }),
  open({
    method: 'get',
    path: `${BASE}/images/:id`,
    summary: "A post's featured image",
    params: idParams,
    query: readQuery,
    run: async ({ who, ctx, params, res, req, query }) => serveImage(ctx, who.user, params.id, res, postPassword(req, query)),
  }),
  open({
    method: 'get',
    path: `${BASE}/authors/:id`,
    summary: "An author's profile and posts",
    params: idParams,
    run: async ({ who, ctx, params }) => envelope(await authorProfile(ctx, who.user, params.id), who),
  }),
  signedIn({
    method: 'post',
    path: `${BASE}/comments/:id/moderate`,
    summary: 'Approve, reject or mark a comment as spam',
    params: idParams,
    body: moderateSchema,
    run: async ({ who, ctx, params, body }) => envelope(await moderateComment(ctx, who.user, params.id, body), who),
  }),
  signedIn({
    method: 'put',
    path: `${BASE}/comments/:id`,
    summary: 'Edit your comment',
    params: idParams,
    body: commentUpdate,
    run: async ({ who, ctx, params, body }) => envelope(await editComment(ctx, who.user, params.id, body), who),
  }),
  signedIn({
    method: 'delete',
    path: `${BASE}/comments/:id`,
    summary: 'Delete a comment',
    params: idParams,
    run: async ({ who, ctx, params }) => envelope(await deleteComment(ctx, who.user, params.id), who),
  }),
  open({
    method: 'get',
    path: `${BASE}/id/:id`,
    summary: 'Get a post by id',
    params: idParams,
    query: readQuery,
    run: async ({ who, ctx, params, query, req }) => {
      const { post, can } = await readPost(ctx, who.user, await loadPost(ctx, params.id), { lang: query.lang, password: postPassword(req, query) });
      return envelope(post, who, {}, can);
    },
  }),
  open({
    method: 'get',
    path: `${BASE}/id/:id/translations`,
    summary: "List a post's translations",
    params: idParams,
    query: readQuery,
    run: async ({ who, ctx, params, query, req }) => envelope(await listTranslations(ctx, who.user, params.id, postPassword(req, query)), who),
  }),
  signedIn({
    method: 'post',
    path: `${BASE}/id/:id/translations`,
    summary: "Add or replace a post's translation",
    params: idParams,
    body: translationSchema,
    run: async ({ who, ctx, params, body }) => {
      requireWriterRole(who.user);
      return envelope(await upsertTranslation(ctx, who.user, params.id, body), who);
    },
  }),
  signedIn({
    method: 'delete',
    path: `${BASE}/id/:id/translations/:lang`,
    summary: "Delete a post's translation",
    params: idParams.extend({ lang: langSchema }),
    run: async ({ who, ctx, params }) => {
      requireWriterRole(who.user);
      return envelope(await deleteTranslation(ctx, who.user, params.id, params.lang), who);
    },
  }),
  signedIn({
    method: 'put',
    path: `${BASE}/:id`,
    summary: 'Update a post',
    params: idParams,
    body: updateSchema,
    run: async ({ who, ctx, params, body }) => {
      await updatePost(ctx, who.user, params.id, body);
      return postAnswer(ctx, who, params.id);
    },
  }),
  signedIn({
    method: 'delete',
    path: `${BASE}/:id`,
    summary: 'Delete a post (restorable)',
    params: idParams,
    run: async ({ who, ctx, params }) => {
      await deletePost(ctx, who.user, params.id);
      return envelope({ id: params.id, deleted: true }, who);
    },
  }),
  status('publish', 'published', 'Publish a post'),
  status('unpublish', 'draft', 'Unpublish a post (back to draft)'),
  signedIn({
    method: 'post',
    path: `${BASE}/:id/schedule`,
    summary: 'Schedule a post to publish later',
    params: idParams,
    body: scheduleBody,
    run: async ({ who, ctx, params, body }) => {
      await changeStatus(ctx, who.user, params.id, 'scheduled', body.scheduled_at);
      return postAnswer(ctx, who, params.id);
    },
  }),
  signedIn({
    method: 'post',
    path: `${BASE}/:id/restore`,
    summary: 'Restore a deleted post',
    params: idParams,
    run: async ({ who, ctx, params }) => {
      await restorePost(ctx, who.user, params.id);
      return postAnswer(ctx, who, params.id);
    },
  }),
  signedIn({
    method: 'post',
    path: `${BASE}/:id/featured-image`,
    summary: "Upload a post's featured image",
    params: idParams,
    // Multipart: the module reads it itself, so the JSON-only body rule does not apply.
    middleware: [(_req, _res, next) => next()],
    run: async ({ who, ctx, params, req, res }) => envelope(await setFeaturedImage(ctx, who.user, params.id, req, res), who),
  }),
  signedIn({
    method: 'delete',
    path: `${BASE}/:id/featured-image`,
    summary: "Remove a post's featured image",
    params: idParams,
    run: async ({ who, ctx, params }) => envelope(await removeFeaturedImage(ctx, who.user, params.id), who),
  }),
  open({
    method: 'get',
    path: `${BASE}/:id/comments`,
    summary: "List a post's comments",
    params: idParams,
    query: commentQuery.extend({ password: z.string().max(200).optional() }),
    run: async ({ who, ctx, params, query, req }) => {
      const post = await livePost(ctx, who.user, params.id, postPassword(req, query));
      const { comments, meta } = await listComments(ctx, who.user, post, query);
      const commentsOn = (await rulesOf(ctx, post.post_type)).behaviors.enables_comments;
      return envelope(comments, who, meta, { comment: Boolean(who.user) && post.status === 'published' && !post.deleted_at && commentsOn });
    },
  }),
  signedIn({
    method: 'post',
    path: `${BASE}/:id/comments`,
    summary: 'Comment on a post',
    params: idParams,
    body: commentCreate,
    run: async ({ who, ctx, params, body, req }) => {
      const post = await livePost(ctx, who.user, params.id, postPassword(req) ?? body.post_password);
      return envelope(await addComment(ctx, who.user, post, body), who);
    },
  }),
  open({
    method: 'get',
    path: `${BASE}/:id/reactions`,
    summary: "A post's reactions",
    params: idParams,
    query: readQuery,
    run: async ({ who, ctx, params, query, req }) => {
      const post = await livePost(ctx, who.user, params.id, postPassword(req, query));
      return envelope(await reactionSummary(ctx, who.user, post.id), who);
    },
  }),
  signedIn({
    method: 'post',
    path: `${BASE}/:id/reactions`,
    summary: 'React to a post (sending it again takes it back)',
    params: idParams,
    body: reactionSchema,
    run: async ({ who, ctx, params, body, req }) => {
      const post = await livePost(ctx, who.user, params.id, postPassword(req));
      return envelope(await toggleReaction(ctx, who.user, post, body.reaction_type), who);
    },
  }),
  signedIn({
    method: 'post',
    path: `${BASE}/:id/bookmark`,
    summary: 'Bookmark a post',
    params: idParams,
    run: async ({ who, ctx, params, req }) => envelope(await addBookmark(ctx, who.user, await livePost(ctx, who.user, params.id, postPassword(req))), who),
  }),
  signedIn({
    method: 'delete',
    path: `${BASE}/:id/bookmark`,
    summary: "Remove a post's bookmark",
    params: idParams,
    run: async ({ who, ctx, params }) => envelope(await removeBookmark(ctx, who.user, params.id), who),
  }),
  open({
    method: 'post',
    path: `${BASE}/:id/view`,
    summary: 'Count a view of a post (once per network and day)',
    params: idParams,
    run: async ({ who, ctx, params, req }) => {
      const post = await livePost(ctx, who.user, params.id, postPassword(req));
      return envelope(await recordView(ctx, post, clientAddress(req)), who);
    },
  }),
  open({
    method: 'get',
    path: `${BASE}/:id/stats`,
    summary: "A post's views, reactions, comments and bookmarks",
    params: idParams,
    query: readQuery,
    run: async ({ who, ctx, params, query, req }) =>
      envelope(await postStats(ctx, who.user, await livePost(ctx, who.user, params.id, postPassword(req, query))), who),
  }),
  open({
    method: 'get',
    path: `${BASE}/:slug`,
    summary: 'Get a published post by its slug',
    params: z.object({ slug: z.string().trim().min(1).max(200) }),
    query: readQuery,
    run: async ({ who, ctx, params, query, req }) => {
      const found = await findBySlug(ctx, params.slug.toLowerCase(), query.lang);
      if (!found) throw notFound('Post not found');
      const { post, can } = await readPost(ctx, who.user, found.row, { lang: query.lang, password: postPassword(req, query) });
      return envelope(post, who, found.redirectTo ? { redirect_to: found.redirectTo, canonical_slug: found.redirectTo } : {}, can);
    },
  }),
];
