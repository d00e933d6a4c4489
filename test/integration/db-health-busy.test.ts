import sqlite3 from 'sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteFile } from '../../src/data/sequelize.js';
import { BACKEND } from '../helpers/backend.js';
import { makeSession } from '../helpers/factories.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * The database health tracker's probe (src/data/db-health.ts) takes SQLite's write lock on a
 * connection of its own. Under this process's own write load that lock is often held by one of its
 * own transactions: the probe then meets SQLITE_BUSY, which is the database alive and busy, not an
 * outage. Another holder of the lock (a second process, a `sqlite3` shell) is still one.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Calls the health tracker's suspicion (what a statement pending 2 s does) every few ms until stopped. */
function probeContinuously(): () => Promise<void> {
  let stop = false;
  const running = (async () => {
    while (!stop) {
      t.app.dbHealth.suspect();
      await sleep(10);
    }
  })();
  return async () => {
    stop = true;
    await running;
  };
}

describe(`database health under this process's own write load (${BACKEND})`, () => {
  it('when a transaction of this process holds the write lock while the probe runs, then the database stays up and the transaction commits', async () => {
    const outages = t.app.dbHealth.status().outages;
    const { user } = await makeSession(t, { name: 'Before' });
    const held = t.app.sequelize.transaction(async (transaction) => {
      await t.app.repos.users.update(user.id, { name: 'During' }, { tx: transaction });
      // Longer than the probe's busy timeout (200 ms): it gives up while this lock is held.
      await sleep(700);
    });
    await sleep(50);
    t.app.dbHealth.suspect();
    await held;
    await sleep(300);
    expect(t.app.dbHealth.status()).toMatchObject({ up: true, outages });
    expect((await t.app.repos.users.findById(user.id))?.name).toBe('During');
    expect((await t.request('GET', '/ready')).status).toBe(200);
  });

  it('when many concurrent writes run while the probe runs over and over, then every write answers 200 (never 503) and no outage is counted', async () => {
    const outages = t.app.dbHealth.status().outages;
    const sessions = await Promise.all(Array.from({ length: 20 }, () => makeSession(t)));
    const stop = probeContinuously();
    const statuses: number[] = [];
    try {
      await Promise.all(
        sessions.map(async (s, i) => {
          for (let k = 0; k < 6; k++) {
            const r = await t.request('PUT', '/auth/user/me', { session: s.token, body: { name: `Writer ${i}-${k}` } });
            statuses.push(r.status);
          }
        }),
      );
    } finally {
      await stop();
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(statuses).toHaveLength(120);
    expect(t.app.dbHealth.status()).toMatchObject({ up: true, outages });
    const me = await t.request('GET', '/auth/user/me', { bridge: true, session: sessions[7].token });
    expect(me.body.user.name).toBe('Writer 7-5');
  }, 120_000);

  if (BACKEND === 'sqlite') {
    it('when another connection holds the write lock, then the probe still reports an outage (503 with Retry-After) and the return once it lets go', async () => {
      const outages = t.app.dbHealth.status().outages;
      const file = sqliteFile(t.app.config)!;
      const other = await new Promise<sqlite3.Database>((resolve, reject) => {
        const db = new sqlite3.Database(file, sqlite3.OPEN_READWRITE, (err) => (err ? reject(err) : resolve(db)));
      });
      const exec = (sql: string) => new Promise<void>((resolve, reject) => other.exec(sql, (err) => (err ? reject(err) : resolve())));
      try {
        await exec('BEGIN IMMEDIATE');
        // Suspected again while it holds, as statements left waiting do: a first probe may still meet this
        // process's own writes trailing from the test before (judged contention, rightly), and a loaded
        // machine may take more than the poll's default second.
        await expect
          .poll(
            () => {
              t.app.dbHealth.suspect();
              return t.app.dbHealth.available();
            },
            { timeout: 10_000 },
          )
          .toBe(false);
        expect(t.app.dbHealth.status().outages).toBe(outages + 1);
        for (const refused of [
          await t.request('GET', '/ready'),
          await t.request('POST', '/auth/login', { body: { email: 'someone@example.test', password: 'whatever it is' } }),
        ]) {
          expect([refused.status, refused.headers.get('retry-after')]).toEqual([503, '5']);
        }
      } finally {
        await exec('ROLLBACK').catch(() => undefined);
        await new Promise<void>((r) => other.close(() => r()));
      }
      await expect.poll(() => t.app.dbHealth.available(), { timeout: 10_000 }).toBe(true);
      expect(t.app.dbHealth.status().outages).toBe(outages + 1);
      expect((await t.request('GET', '/ready')).status).toBe(200);
    });
  }
});
