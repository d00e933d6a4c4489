import { z } from 'zod';
import { Codes, defineRoute, moduleEnvelope, unavailable, type ModuleContext } from '../../src/module-api.js';
import { createInput, typeKey, updateInput } from './definition.js';
import type { PostTypesSettings } from './settings.js';
import { createDefinition, definitions, deleteDefinition, getDefinition, reorder, updateDefinition, usage } from './store.js';

const MODULE = 'post-types';
const BASE = '/api/v1/post-types';
const ADMINS = { roles: ['admin', 'superadmin'] as const };
const keyParams = z.object({ type_key: typeKey });

/** Switched off by its setting (POST_TYPES_ENABLED=false), or the blog it shapes is off: 503 MODULE_DISABLED. */
function assertOn(ctx: ModuleContext): void {
  if (!ctx.config<PostTypesSettings>().enabled) {
    throw unavailable('Post types are switched off (POST_TYPES_ENABLED=false)', Codes.MODULE_DISABLED);
  }
  if (!ctx.modules.isEnabled('blog')) throw unavailable('Post types need the blog module, which is switched off', Codes.MODULE_DISABLED);
}

const list = defineRoute({
  method: 'get',
  path: BASE,
  summary: 'List post types',
  auth: 'optional-session',
  module: MODULE,
  // Post type definitions, by sort_order: active ones, or all with active=false.
  query: z.strictObject({ active: z.enum(['true', 'false'], { error: 'must be "true" or "false"' }).default('true') }),
  async handler({ ctx, auth, query }) {
    assertOn(ctx);
    const { defs, cache } = await definitions(ctx);
    const shown = query.active === 'true' ? defs.filter((d) => d.is_active) : defs;
    return moduleEnvelope(shown, auth, { total: shown.length, active_only: query.active === 'true', cache });
  },
});

const getOne = defineRoute({
  method: 'get',
  path: `${BASE}/:type_key`,
  summary: 'Get a post type',
  auth: ADMINS,
  module: MODULE,
  // One post type definition, with how many posts use it.
  params: keyParams,
  async handler({ ctx, auth, params }) {
    assertOn(ctx);
    const d = await getDefinition(ctx, params.type_key);
    return moduleEnvelope(d, auth, { post_count: (await usage(ctx))[d.type_key] ?? 0 });
  },
});

const create = defineRoute({
  method: 'post',
  path: BASE,
  summary: 'Create a post type',
  auth: ADMINS,
  module: MODULE,
  // Defines a post type.
  body: createInput,
  async handler({ ctx, auth, body }) {
    assertOn(ctx);
    return moduleEnvelope(await createDefinition(ctx, body), auth, { created: true });
  },
});

const reorderRoute = defineRoute({
  method: 'post',
  path: `${BASE}/reorder`,
  summary: 'Reorder post types',
  auth: ADMINS,
  module: MODULE,
  // Orders post types: the named ones first, in that order; the others after them as they were.
  body: z.strictObject({
    order: z
      .array(typeKey)
      .min(1, 'must name at least one post type')
      .max(500)
      .refine((l) => new Set(l).size === l.length, 'must not name a post type twice'),
  }),
  async handler({ ctx, auth, body }) {
    assertOn(ctx);
    return moduleEnvelope(await reorder(ctx, body.order), auth);
  },
});

const update = defineRoute({
  method: 'put',
  path: `${BASE}/:type_key`,
  summary: 'Update a post type',
  auth: ADMINS,
  module: MODULE,
  // Changes a post type (behaviors are merged key by key; a further key set to null is removed).
  params: keyParams,
  body: updateInput,
  async handler({ ctx, auth, params, body }) {
    assertOn(ctx);
    return moduleEnvelope(await updateDefinition(ctx, params.type_key, body), auth);
  },
});

const remove = defineRoute({
  method: 'delete',
  path: `${BASE}/:type_key`,
  summary: 'Delete a custom post type (its posts move to move_to)',
  auth: ADMINS,
  module: MODULE,
  // Deletes a custom post type; posts using it must be moved with ?move_to=<type_key>.
  params: keyParams,
  query: z.strictObject({ move_to: typeKey.optional() }),
  async handler({ ctx, auth, params, query }) {
    assertOn(ctx);
    const { moved } = await deleteDefinition(ctx, params.type_key, query.move_to);
    return moduleEnvelope({ type_key: params.type_key, deleted: true, moved_posts: moved, moved_to: query.move_to ?? null }, auth);
  },
});

export const routes = [list, create, reorderRoute, getOne, update, remove];
