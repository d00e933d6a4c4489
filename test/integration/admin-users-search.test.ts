import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { makeSession, makeUser } from '../helpers/factories.js';

let t: TestApp;
let admin: string;
beforeAll(async () => {
  t = await startTestApp();
  admin = (await makeSession(t, { user_type: 'admin' })).token;
});
afterAll(async () => t?.close());

const search = async (q: string) => {
  const r = await t.request('GET', `/auth/admin/users?q=${encodeURIComponent(q)}&limit=100`, { session: admin });
  expect(r.status).toBe(200);
  return (r.body.data.users as { name: string }[]).map((u) => u.name).sort();
};

describe('admin user search wildcards', () => {
  it('when the search text holds % or _, then they match literally, not as wildcards', async () => {
    const tag = `w${Date.now().toString(36)}`;
    await makeUser(t, { name: `${tag} 50% off` });
    await makeUser(t, { name: `${tag} 500 off` });
    await makeUser(t, { name: `${tag} a_b` });
    await makeUser(t, { name: `${tag} axb` });
    expect(await search(`${tag} 50%`)).toEqual([`${tag} 50% off`]);
    expect(await search(`${tag} a_b`)).toEqual([`${tag} a_b`]);
    expect(await search(`${tag} a\\b`)).toEqual([]);
    expect((await search(tag)).length).toBe(4);
  });
});
