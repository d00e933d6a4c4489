import { makeSession } from '../../../test/helpers/factories.js';
import { startTestApp, type StartTestAppOptions, type TestApp } from '../../../test/helpers/test-app.js';

export { BACKEND } from '../../../test/helpers/backend.js';
export type { TestApp };

/** A test app with the blog installed (optionally with settings). */
export async function startBlog(opts: StartTestAppOptions & { config?: Record<string, unknown> } = {}): Promise<TestApp> {
  const t = await startTestApp(opts);
  await t.app.modules.hub.install(['blog'], opts.config ? { config: { blog: opts.config } } : undefined);
  return t;
}

export interface Person {
  id: string;
  email: string;
  token: string;
}

/** One user of each role the blog distinguishes. */
export async function people(t: TestApp) {
  const make = async (user_type: string): Promise<Person> => {
    const { user, token } = await makeSession(t, { user_type, name: `${user_type} name` });
    return { id: user.id, email: user.email, token };
  };
  return {
    writer: await make('writer'),
    writer2: await make('writer'),
    admin: await make('admin'),
    customer: await make('customer'),
    customer2: await make('customer'),
  };
}

let n = 0;
/** Creates a post through the API and returns its data (fails the test on anything but 200). */
export async function makePost(t: TestApp, token: string, body: Record<string, unknown> = {}) {
  const r = await t.request('POST', '/api/v1/posts', { session: token, body: { title: `Post ${++n} ${Date.now()}`, body: 'Hello **world**', ...body } });
  if (r.status !== 200) throw new Error(`create answered ${r.status}: ${r.text}`);
  return r.body.data as Record<string, any>;
}

export const published = (t: TestApp, token: string, body: Record<string, unknown> = {}) => makePost(t, token, { status: 'published', ...body });
