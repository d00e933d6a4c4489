import { startTestApp, type StartTestAppOptions, type TestApp } from '../../../test/helpers/test-app.js';
import { people as blogPeople } from '../../blog/test/kit.js';

export { BACKEND } from '../../../test/helpers/backend.js';
export { makePost, published } from '../../blog/test/kit.js';
export type { TestApp };

/** A test app with the blog and post types installed. */
export async function startPostTypes(opts: StartTestAppOptions = {}): Promise<TestApp> {
  const t = await startTestApp(opts);
  if (!opts.sharing) await t.app.modules.hub.install(['blog', 'post-types']);
  return t;
}

export const people = blogPeople;

/** A recipe type: a required number field, a select, comments off. */
export const RECIPE = {
  type_key: 'recipe',
  type_name: 'Recipe',
  description: 'Dishes with servings',
  slug_prefix: 'recipes',
  field_schema: [
    { name: 'servings', label: 'Servings', type: 'number', required: true },
    { name: 'difficulty', label: 'Difficulty', type: 'select', options: ['easy', 'hard'] },
  ],
  behaviors: { enables_comments: false },
  icon: 'chef-hat',
  color: '#ff8800',
};

/** Creates a post type through the API as `token` (an admin) and returns it (fails on anything but 200). */
export async function defineType(t: TestApp, token: string, body: Record<string, unknown>) {
  const r = await t.request('POST', '/api/v1/post-types', { session: token, body });
  if (r.status !== 200) throw new Error(`define answered ${r.status}: ${r.text}`);
  return r.body.data as Record<string, any>;
}
