import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSession } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * A validation a minute or more after a session's last use records the new use: in the caches at
 * once, in the database within a second, many sessions' uses in one statement (session-service.ts).
 */
let t: TestApp;
let now = Date.now();
beforeAll(async () => {
  t = await startTestApp({ clock: () => new Date(now) });
});
afterAll(async () => t?.close());

describe('recording session use', () => {
  it('when many sessions are used after a minute, then each one’s own time reaches the database within a second; a session signed out meanwhile stays gone', async () => {
    const made = await Promise.all(Array.from({ length: 30 }, () => makeSession(t)));
    const ids = await Promise.all(made.map(async (m) => (await t.request<any>('GET', '/auth/validation', { session: m.token })).body.session.id as string));
    const at: Date[] = [];
    for (const m of made) {
      now += 2 * 60_000 + 17;
      at.push(new Date(now));
      const v = await t.request<any>('GET', '/auth/validation', { session: m.token });
      expect(v.body.session.last_used_at).toBe(new Date(now).toISOString());
    }
    // The last one signs out before the write: its row must not come back.
    expect((await t.request('POST', '/auth/logout', { session: made[29].token })).status).toBe(200);
    await expect
      .poll(async () => (await Promise.all(ids.slice(0, 29).map((id) => t.app.repos.sessions.findById(id)))).map((s) => s?.last_used_at.getTime()), {
        timeout: 3_000,
      })
      .toEqual(at.slice(0, 29).map((d) => d.getTime()));
    expect(await t.app.repos.sessions.findById(ids[29])).toBeNull();
  });

  it('when flushUses is called (the app’s close calls it before the database closes), then the uses waiting are written at once', async () => {
    const { token } = await makeSession(t);
    const id = (await t.request<any>('GET', '/auth/validation', { session: token })).body.session.id as string;
    now += 5 * 60_000;
    expect((await t.request<any>('GET', '/auth/validation', { session: token })).body.session.last_used_at).toBe(new Date(now).toISOString());
    await t.app.services.sessions.flushUses();
    expect((await t.app.repos.sessions.findById(id))?.last_used_at.getTime()).toBe(now);
  });
});
