import { defineModule, type ModuleContext } from '../../src/module-api.js';
import { checkFieldValues } from './definition.js';
import { createPostTypes, POST_TYPE_TABLES } from './migrations/20261125-1100-create-post-types.js';
import { routes } from './routes.js';
import { postTypesConfig, type PostTypesSettings } from './settings.js';
import { definitions } from './store.js';

/**
 * Answers the blog's `blog.post_types`: every definition (inactive ones too, which existing posts
 * still follow), with the check of its field values. Switched off by its setting, it answers
 * nothing and the blog falls back to its built-in type.
 */
async function provide(payload: { types: unknown[] | null }, ctx: ModuleContext): Promise<void> {
  if (!ctx.config<PostTypesSettings>().enabled) return;
  const { defs } = await definitions(ctx);
  payload.types = defs.map((d) => ({
    type_key: d.type_key,
    slug_prefix: d.slug_prefix,
    is_active: d.is_active,
    behaviors: d.behaviors,
    checkFields: (values: Record<string, unknown>) => checkFieldValues(d.type_key, d.field_schema, values),
  }));
}

/** Post types: definitions that shape blog posts (fields, behaviours, public paths). */
export default defineModule({
  id: 'post-types',
  version: '1.0.0',
  description:
    'Custom post types under /api/v1/post-types: typed fields and behaviours (comments, reactions, scheduling, approval, formats, limits, SEO) that the blog enforces',
  requires: ['blog'],
  config: postTypesConfig,
  migrations: [createPostTypes],
  tables: [...POST_TYPE_TABLES],
  routes,
  hooks: [{ event: 'blog.post_types', handler: provide }],
  errorCodes: [
    { code: 'POST_TYPE_EXISTS', status: 400, description: 'A post type with this type_key exists.' },
    { code: 'POST_TYPE_KEY_FIXED', status: 400, description: 'A post type keeps its type_key.' },
    { code: 'POST_TYPE_BUILT_IN', status: 400, description: 'Built-in post types cannot be deleted (switch them off instead).' },
    { code: 'POST_TYPE_IN_USE', status: 400, description: 'Posts use the type: move them with ?move_to= to delete it.' },
  ],
});
